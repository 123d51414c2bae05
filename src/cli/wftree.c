/*
 * wftree.c — `jobd workflow show ID`: a workflow (GET /v1/workflows/{id},
 * docs/API.md, "Workflows") for a person on a terminal, its steps drawn as
 * a tree; piped, the JSON exactly as the server sent it, for scripts.
 *
 * The steps form a graph with no cycle (the server refuses one), not a
 * tree: a step may have several parents. The drawing starts at the roots
 * (the steps none of whose parents are listed), in the order the steps
 * were submitted, and puts each step's children under it; a step reached a
 * second time (another parent of it) is named with its job id and "shown
 * above" instead of being drawn again with everything below it, so the
 * output stays as long as the steps and edges, whatever the shape. The walk
 * keeps its own stack (a chain of 10,000 steps is 10,000 levels), and the
 * indentation stops growing after WF_INDENT_MAX levels.
 *
 * Colours only on a terminal that wants them (NO_COLOR unset, TERM not
 * "dumb"); the box-drawing characters only under a UTF-8 locale, else ASCII.
 * The server's strings are printed with control characters as '?'.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"

/* Past this many levels the indentation stops growing ("…" marks it). */
#define WF_INDENT_MAX 24

struct wf_node {
    const json_t *step; /* borrowed from the answer */
    const char *ref;
    size_t *kids; /* indexes of its children, in submission order (malloc'd) */
    size_t nkids, cap;
    size_t parents; /* of its parents, those listed */
    bool drawn;
};

struct wf_ref {
    const char *ref;
    size_t node;
};

struct wf_tree {
    struct wf_node *n;
    size_t count;
    struct wf_ref *by_ref; /* the nodes sorted by ref, to find a parent */
    bool color, utf8;
    char *last; /* per level: the node there is its parent's last child */
};

static int
by_ref_cmp(const void *a, const void *b)
{
    return strcmp(((const struct wf_ref *)a)->ref, ((const struct wf_ref *)b)->ref);
}

/* The node of ref, or (size_t)-1 when no listed step has it. */
static size_t
find(const struct wf_tree *t, const char *ref)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->by_ref[mid].ref, ref);
        if (c == 0)
            return t->by_ref[mid].node;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (size_t)-1;
}

static bool
add_kid(struct wf_node *p, size_t kid)
{
    if (p->nkids == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4;
        size_t *k = realloc(p->kids, cap * sizeof *k);
        if (k == NULL)
            return false;
        p->kids = k;
        p->cap = cap;
    }
    p->kids[p->nkids++] = kid;
    return true;
}

static void
tree_free(struct wf_tree *t)
{
    for (size_t i = 0; t->n != NULL && i < t->count; i++)
        free(t->n[i].kids);
    free(t->n);
    free(t->by_ref);
    free(t->last);
}

/* Builds the graph of the answer's steps (borrowed). false: out of memory. */
static bool
tree_build(struct wf_tree *t, const json_t *steps)
{
    t->count = json_array_size(steps);
    t->n = calloc(t->count + 1, sizeof *t->n);
    t->by_ref = calloc(t->count + 1, sizeof *t->by_ref);
    t->last = calloc(t->count + 2, 1);
    if (t->n == NULL || t->by_ref == NULL || t->last == NULL)
        return false;
    for (size_t i = 0; i < t->count; i++) {
        t->n[i].step = json_array_get(steps, i);
        const char *ref = json_string_value(json_object_get(t->n[i].step, "ref"));
        t->n[i].ref = ref ? ref : "";
        t->by_ref[i] = (struct wf_ref){t->n[i].ref, i};
    }
    qsort(t->by_ref, t->count, sizeof *t->by_ref, by_ref_cmp);
    for (size_t i = 0; i < t->count; i++) {
        size_t k;
        const json_t *p;
        json_array_foreach(json_object_get(t->n[i].step, "depends_on"), k, p) {
            size_t j = find(t, json_string_value(p) ? json_string_value(p) : "");
            if (j == (size_t)-1 || j == i)
                continue; /* a parent whose job was deleted is not listed */
            if (!add_kid(&t->n[j], i))
                return false;
            t->n[i].parents++;
        }
    }
    return true;
}

/* s with control characters and DEL as '?'. */
static void
put_clean(const char *s)
{
    for (; s != NULL && *s; s++)
        putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* The SGR colour of a status, or NULL. */
static const char *
status_color(const char *s)
{
    static const char *const map[][2] = {{"succeeded", "32"}, {"running", "34"},
                                         {"pending", "33"},   {"dead", "31"},
                                         {"cancelled", "90"}, {"waiting", "36"}};
    for (size_t i = 0; s != NULL && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

static void
put_status(const struct wf_tree *t, const char *s)
{
    const char *c = t->color ? status_color(s) : NULL;
    if (c != NULL)
        printf("\033[%sm", c);
    put_clean(s ? s : "?");
    if (c != NULL)
        fputs("\033[0m", stdout);
}

/* The lines' lead-in for a node at depth d (0: a root). */
static void
put_prefix(const struct wf_tree *t, size_t d)
{
    if (d == 0)
        return;
    size_t shown = d > WF_INDENT_MAX ? WF_INDENT_MAX - 1 : d - 1;
    for (size_t l = 1; l <= shown; l++)
        fputs(t->last[l] ? "   " : t->utf8 ? "\u2502  " : "|  ", stdout);
    if (d > WF_INDENT_MAX)
        fputs(t->utf8 ? "\u2026 " : "... ", stdout);
    if (t->last[d])
        fputs(t->utf8 ? "\u2514\u2500 " : "`- ", stdout);
    else
        fputs(t->utf8 ? "\u251c\u2500 " : "|- ", stdout);
}

/* One step's line: in full the first time, as a reference after. */
static void
put_node(const struct wf_tree *t, const struct wf_node *n, size_t d)
{
    long long job = (long long)json_integer_value(json_object_get(n->step, "job_id"));
    put_prefix(t, d);
    if (t->color)
        fputs("\033[1m", stdout);
    put_clean(n->ref);
    if (t->color)
        fputs("\033[0m", stdout);
    if (n->drawn) {
        printf("  (job %lld, shown above)\n", job);
        return;
    }
    fputs("  ", stdout);
    put_status(t, json_string_value(json_object_get(n->step, "status")));
    printf("  job %lld  ", job);
    put_clean(json_string_value(json_object_get(n->step, "type")));
    putchar('\n');
}

/* Draws root r and what is below it, depth first with its own stack (a
 * frame is a node and the index of its next child). false: out of memory. */
static bool
draw_from(struct wf_tree *t, size_t r)
{
    struct frame {
        size_t node, next;
    } *stack = malloc((t->count + 1) * sizeof *stack);
    if (stack == NULL)
        return false;
    size_t depth = 0;
    put_node(t, &t->n[r], 0);
    t->n[r].drawn = true;
    stack[0] = (struct frame){r, 0};
    while (true) {
        struct frame *f = &stack[depth];
        struct wf_node *p = &t->n[f->node];
        if (f->next == p->nkids) {
            if (depth == 0)
                break;
            depth--;
            continue;
        }
        size_t kid = p->kids[f->next++];
        t->last[depth + 1] = f->next == p->nkids;
        put_node(t, &t->n[kid], depth + 1);
        if (t->n[kid].drawn)
            continue;
        t->n[kid].drawn = true;
        stack[++depth] = (struct frame){kid, 0};
    }
    free(stack);
    return true;
}

/* True when LC_ALL, else LC_CTYPE, else LANG names UTF-8 ("C.UTF-8",
 * "en_US.utf8"), as the C library would take it. */
static bool
locale_utf8(void)
{
    const char *names[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (v == NULL || *v == '\0')
            continue;
        const char *dot = strchr(v, '.');
        if (dot == NULL)
            return false;
        char cs[8] = "";
        size_t n = 0;
        for (const char *c = dot + 1; *c && *c != '@' && n + 1 < sizeof cs; c++)
            if (*c != '-')
                cs[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        cs[n] = '\0';
        return strcmp(cs, "utf8") == 0;
    }
    return false;
}

/* "4: 1 running, 1 succeeded, 2 waiting", the counts that are not zero. */
static void
put_counts(const json_t *w)
{
    static const char *const order[] = {"waiting",   "pending", "running",
                                        "succeeded", "dead",    "cancelled"};
    const json_t *c = json_object_get(w, "counts");
    long long total = 0;
    for (int i = 0; i < 6; i++)
        total += json_integer_value(json_object_get(c, order[i]));
    printf("steps     %lld", total);
    const char *sep = ": ";
    for (int i = 0; i < 6; i++) {
        long long v = json_integer_value(json_object_get(c, order[i]));
        if (v > 0) {
            printf("%s%lld %s", sep, v, order[i]);
            sep = ", ";
        }
    }
    putchar('\n');
}

/* The header lines: id and name, status, times, counts. */
static void
put_header(const struct wf_tree *t, const json_t *w)
{
    printf("workflow  %lld  ", (long long)json_integer_value(json_object_get(w, "id")));
    put_clean(json_string_value(json_object_get(w, "name")));
    fputs("\nstatus    ", stdout);
    put_status(t, json_string_value(json_object_get(w, "status")));
    const char *c = json_string_value(json_object_get(w, "created_at"));
    const char *f = json_string_value(json_object_get(w, "finished_at"));
    printf("\ncreated   %s\nfinished  %s\n", c ? c : "-", f ? f : "-");
    put_counts(w);
}

/* Draws w (borrowed). false: out of memory. */
static bool
draw(const json_t *w)
{
    struct wf_tree t = {0};
    const char *term = getenv("TERM"), *nc = getenv("NO_COLOR");
    t.color = (nc == NULL || *nc == '\0') && (term == NULL || strcmp(term, "dumb") != 0);
    t.utf8 = locale_utf8();
    bool ok = tree_build(&t, json_object_get(w, "steps"));
    if (ok) {
        put_header(&t, w);
        if (t.count > 0)
            putchar('\n');
    }
    /* Roots first; then, never in a graph without a cycle, any step left. */
    for (int pass = 0; ok && pass < 2; pass++)
        for (size_t i = 0; ok && i < t.count; i++)
            if (!t.n[i].drawn && (pass == 1 || t.n[i].parents == 0))
                ok = draw_from(&t, i);
    tree_free(&t);
    return ok;
}

int
cli_workflow_show(const char *server, long id)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/workflows/%ld", id);
    if (!isatty(1))
        return cli_send_print("workflow show", server, "GET", path, NULL);
    struct cli_http_resp r;
    int rc = cli_http("workflow show", server, "GET", path, NULL, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status != 200) {
        rc = cli_http_fail("workflow show", &r);
        free(r.body);
        return rc;
    }
    json_t *w = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    if (!json_is_object(w)) {
        json_decref(w);
        fprintf(stderr, "jobd workflow show: the server's answer is not a JSON object\n");
        return CLI_FAILED;
    }
    bool ok = draw(w);
    json_decref(w);
    fflush(stdout);
    return ok ? CLI_OK : cli_error("workflow show", JOBD_E_NOMEM, NULL);
}
