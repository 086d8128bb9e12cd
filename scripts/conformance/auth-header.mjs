// Node preload (node --import) for scripts/conformance.sh.
//
// The conformance suite's `server --url` has no option for credentials, and
// tmux-mcp's HTTP server always requires a bearer token. This module makes
// every HTTP request the suite's process sends to the server under test
// carry `Authorization: Bearer <token>`, whichever way the suite sends it:
// the TypeScript SDK's transport and its raw checks use fetch, the
// DNS-rebinding scenario uses undici's request(), and both go through
// undici's global dispatcher; the header-validation scenarios (suite 0.2)
// use node:http's request() to keep header case, which is wrapped here.
// Nothing else is changed: Host, Origin and the MCP headers reach the
// server exactly as the suite wrote them, so its Host/Origin checks are
// what the rebinding scenario tests.
//
// CONFORMANCE_BEARER_TOKEN: the token (from the environment, never argv).
// CONFORMANCE_TARGET_ORIGIN: e.g. http://127.0.0.1:8765; other origins get
// no token.
import http from 'node:http';
import { Agent, setGlobalDispatcher } from 'undici';

const token = process.env.CONFORMANCE_BEARER_TOKEN;
const target = process.env.CONFORMANCE_TARGET_ORIGIN;
if (!token || !target) {
  throw new Error('auth-header.mjs: CONFORMANCE_BEARER_TOKEN and CONFORMANCE_TARGET_ORIGIN must be set');
}
const value = `Bearer ${token}`;

// withAuth returns undici request headers (null, a flat [k, v, ...] array,
// an array of [k, v] pairs, an iterable of pairs, or an object) with the
// Authorization header added unless one is already there.
function withAuth(headers) {
  if (headers == null) {
    return { authorization: value };
  }
  if (Array.isArray(headers) || typeof headers[Symbol.iterator] === 'function') {
    const arr = Array.from(headers);
    if (arr.length > 0 && Array.isArray(arr[0])) {
      if (arr.some(([k]) => String(k).toLowerCase() === 'authorization')) return arr;
      return [...arr, ['authorization', value]];
    }
    for (let i = 0; i < arr.length; i += 2) {
      if (String(arr[i]).toLowerCase() === 'authorization') return arr;
    }
    return [...arr, 'authorization', value];
  }
  if (Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) return headers;
  return { ...headers, authorization: value };
}

setGlobalDispatcher(
  new Agent().compose((dispatch) => (opts, handler) => {
    const origin = opts.origin ? new URL(String(opts.origin)).origin : '';
    if (origin === target) {
      opts = { ...opts, headers: withAuth(opts.headers) };
    }
    return dispatch(opts, handler);
  })
);

// node:http's request(url?, options?, callback?) and get(): add the header
// to requests for the target's host and port before they are sent (headers
// go out with the first write or end, after request() returns).
const targetURL = new URL(target);
function forTarget(args) {
  let host = '';
  let port = '';
  for (const a of args) {
    if (typeof a === 'string' || a instanceof URL) {
      const u = new URL(a);
      host = u.hostname;
      port = u.port || (u.protocol === 'https:' ? '443' : '80');
    } else if (a && typeof a === 'object') {
      if (a.hostname || a.host) host = a.hostname || String(a.host).replace(/:\d+$/, '');
      if (a.port) port = String(a.port);
    }
  }
  const want = targetURL.port || (targetURL.protocol === 'https:' ? '443' : '80');
  return host.replace(/^\[|\]$/g, '') === targetURL.hostname.replace(/^\[|\]$/g, '') && port === want;
}
for (const name of ['request', 'get']) {
  const orig = http[name];
  http[name] = function (...args) {
    const req = orig.apply(this, args);
    if (forTarget(args) && !req.headersSent && req.getHeader('authorization') === undefined) {
      req.setHeader('authorization', value);
    }
    return req;
  };
}
