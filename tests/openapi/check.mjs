// check.mjs — the response validator of tests/integration/test_openapi.sh.
//
// Holds docs/openapi.yaml and the server's route table (parsed from
// src/api/router.c, the one place routes are declared), and offers call():
// one real HTTP request whose answer must have a status the operation
// declares, the declared content type, required headers and a body valid
// against the declared schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1
// uses). Every answer is recorded as (method, path template, status), so
// the driver can demand that every status the spec declares was seen.
// Kept apart from the scenario (drive.mjs) so each stays short.
import fs from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import YAML from 'yaml';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const esc = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class Checker {
  // spec: a path to the YAML, or an already parsed document. like: another
  // Checker (of another server) whose spec, route table and compiled
  // validators this one shares; what it has seen and failed stay its own.
  constructor(spec, routerPath, baseUrl, tokens, like = null) {
    this.base = baseUrl;
    this.tokens = tokens; // role -> token
    if (like) {
      ({ spec: this.spec, routerSrc: this.routerSrc, ajv: this.ajv, validators: this.validators } = like);
    } else {
      this.spec = typeof spec === 'string' ? YAML.parse(fs.readFileSync(spec, 'utf8')) : spec;
      this.routerSrc = fs.readFileSync(routerPath, 'utf8');
      this.ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats(this.ajv);
      this.ajv.addSchema(this.spec, 'spec');
      this.validators = new Map();
    }
    this.tag = ''; // which server, in FAIL lines
    this.seen = new Set();
    this.answers = new Map(); // "METHOD path status" -> the first body seen
    this.failures = [];
  }

  // Every operation of the spec: {method, path, op, params}.
  operations() {
    const out = [];
    for (const [path, item] of Object.entries(this.spec.paths))
      for (const m of METHODS)
        if (item[m]) out.push({ method: m.toUpperCase(), path, op: item[m] });
    return out;
  }

  // The route table: {method, path, role} for each entry of api_routes[].
  routes() {
    const re = /\{"(GET|POST|PUT|DELETE|PATCH)",\s*"([^"]+)",\s*\w+,\s*\w+,\s*(true|false),\s*API_ROLE_(\w+)\}/g;
    const out = [];
    for (const m of this.routerSrc.matchAll(re)) {
      const role = m[3] === 'true' ? 'none'
        : m[4] !== 'NONE' ? m[4].toLowerCase() : (m[1] === 'GET' ? 'read' : 'write');
      out.push({ method: m[1], path: m[2], role });
    }
    return out;
  }

  fail(msg) {
    this.failures.push(msg);
    console.log(`FAIL${this.tag}: ${msg}`);
  }

  // A $ref'd response object (components/responses) and its JSON pointer.
  response(op, pointer, status) {
    let r = op.responses[status];
    let ptr = `${pointer}/responses/${status}`;
    while (r && r.$ref) {
      ptr = r.$ref.slice(1);
      r = r.$ref.slice(2).split('/').reduce((o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.spec);
    }
    return { r, ptr };
  }

  validator(ptr) {
    if (!this.validators.has(ptr))
      this.validators.set(ptr, this.ajv.compile({ $ref: `spec#${ptr}` }));
    return this.validators.get(ptr);
  }

  validate(ptr, value, what) {
    const v = this.validator(ptr);
    if (v(value)) return true;
    const why = v.errors.map((e) => `body${e.instancePath} ${e.message}` +
      (e.params && e.params.additionalProperty ? ` ('${e.params.additionalProperty}')` : '') +
      (e.params && e.params.allowedValues ? ` (${e.params.allowedValues.join(', ')})` : ''));
    this.fail(`${what}: ${why.join('; ')}\n  body: ${JSON.stringify(value).slice(0, 600)}`);
    return false;
  }

  // One request. opts: {role (default the operation's x-jobd-role; null =
  // no token), params, query, body (JSON value), raw (string body),
  // headers, expect (status), stream (a text/event-stream answer is read
  // until this string)}. Returns {status, body, headers}.
  async call(method, template, opts = {}) {
    const item = this.spec.paths[template];
    const op = item && item[method.toLowerCase()];
    const where = `${method} ${template}`;
    if (!op) {
      this.fail(`${where}: the test calls an operation the spec does not have`);
      return { status: 0, body: null };
    }
    const pointer = `/paths/${esc(template)}/${method.toLowerCase()}`;
    let path = template.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(String(opts.params[k])));
    if (opts.query) path += '?' + new URLSearchParams(opts.query).toString();
    const role = 'role' in opts ? opts.role : op['x-jobd-role'];
    const headers = { ...(opts.headers || {}) };
    if (role && role !== 'none') headers.Authorization = `Bearer ${this.tokens[role]}`;
    let body;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !('Content-Type' in headers)) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.base + path, { method, headers, body });
    let text;
    if (opts.stream && (res.headers.get('content-type') || '').startsWith('text/event-stream')) {
      // A stream never ends: read until opts.stream appears, then hang up.
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      text = '';
      while (!text.includes(opts.stream)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
      }
      await reader.cancel();
    } else {
      text = await res.text();
    }
    const status = String(res.status);
    const label = `${where} -> ${status}`;
    if (opts.expect !== undefined && String(opts.expect) !== status) {
      this.fail(`${where}: expected ${opts.expect}, got ${status}: ${text.slice(0, 300)}`);
      return { status: res.status, body: null, headers: res.headers };
    }
    // A request body the server took must be one the spec allows, too.
    if (opts.body !== undefined && res.status < 300 && op.requestBody)
      this.validate(`${pointer}/requestBody/content/application~1json/schema`, opts.body,
                    `${where}: request body the server accepted`);
    if (!op.responses[status]) {
      this.fail(`${label}: status not declared in the spec: ${text.slice(0, 300)}`);
      return { status: res.status, body: null, headers: res.headers };
    }
    const parsed = this.checkAnswer(this.response(op, pointer, status), res, text, label);
    if (!this.seen.has(`${where} ${status}`)) this.answers.set(`${where} ${status}`, parsed);
    this.seen.add(`${where} ${status}`);
    return { status: res.status, body: parsed, headers: res.headers };
  }

  // Content type, headers and body of an answer against a response object.
  checkAnswer({ r, ptr }, res, text, label) {
    for (const [name, h] of Object.entries(r.headers || {})) {
      const hv = res.headers.get(name);
      const spec = h.$ref ? this.spec.components.headers[h.$ref.split('/').pop()] : h;
      if (hv === null && spec.required) this.fail(`${label}: header ${name} missing`);
      if (hv !== null && spec.schema && spec.schema.const !== undefined && hv !== spec.schema.const)
        this.fail(`${label}: header ${name} is '${hv}', not '${spec.schema.const}'`);
    }
    if (!r.content) {
      if (text.length) this.fail(`${label}: the spec declares no body, got ${text.slice(0, 200)}`);
      return null;
    }
    const ct = res.headers.get('content-type');
    if (!r.content[ct]) {
      this.fail(`${label}: content type '${ct}' not among ${Object.keys(r.content).join(', ')}`);
      return null;
    }
    let value = text;
    if (ct === 'application/json') {
      try { value = JSON.parse(text); } catch (e) {
        this.fail(`${label}: body is not JSON: ${text.slice(0, 200)}`);
        return null;
      }
    }
    this.validate(`${ptr}/content/${esc(ct)}/schema`, value, label);
    return value;
  }

  // An answer outside any operation (unknown route, wrong method) against a
  // components/responses entry.
  async callRaw(method, path, role, name, expect) {
    const headers = role ? { Authorization: `Bearer ${this.tokens[role]}` } : {};
    const res = await fetch(this.base + path, { method, headers });
    const text = await res.text();
    const label = `${method} ${path} -> ${res.status}`;
    if (res.status !== expect) this.fail(`${label}: expected ${expect}: ${text.slice(0, 200)}`);
    const r = this.spec.components.responses[name];
    this.checkAnswer({ r, ptr: `/components/responses/${name}` }, res, text, label);
    return res;
  }
}
