/*
 * lease.h — the lease tokens of claims over HTTP (docs/API.md, Remote
 * workers): each job a claim hands out gets a random token, which its
 * heartbeats and reports must carry; the store keeps only its SHA-256, so
 * a token read from the database (or a backup) cannot be used, and a
 * token's holder is the one worker the claim answered.
 */
#ifndef JOBD_API_LEASE_H
#define JOBD_API_LEASE_H

#include "store/store.h"

/* 128 random bits as 32 hex digits. */
#define LEASE_TOKEN_LEN 32

typedef char lease_token[LEASE_TOKEN_LEN + 1];

/*
 * Makes a token for each job of l (into *out, malloc'd, the caller's;
 * NULL when l is empty) and records their hashes in st. On failure the
 * jobs are given back (store_release: no attempt counted) and *out is
 * NULL: a job handed out without a token could never be reported.
 */
int api_lease_tokens(struct store *st, const struct job_list *l, lease_token **out,
                     struct jobd_error *err);

#endif
