// loopback.cjs: a preload for `node -r /path/to/loopback.cjs server.js ...` that keeps
// test servers on the loopback interface.
//
// 1. Every TCP listen() that names no host, or a wildcard host (0.0.0.0, ::), binds
//    127.0.0.1 instead of all interfaces. server-everything, the SDK example servers and
//    the conformance suite's mock servers all call listen(port) with no host option.
// 2. If AGENTMCP_LISTEN_FD names an open file descriptor (internal/testing/peers passes a pipe as
//    fd 3), one JSON line is written to it for each TCP listen, forced or not, that
//    succeeds or fails:
//      {"event":"listening","address":"127.0.0.1","port":41234}
//      {"event":"error","code":"EADDRINUSE","port":3001,"message":"listen EADDRINUSE: ..."}
//    Together with PORT=0 this tells the parent which port the kernel picked and when the
//    socket accepts connections, without parsing the server's own log lines.
//
// Why the DNS lookup is answered synchronously: given a host, net.Server#listen resolves it
// with dns.lookup before binding, and dns.lookup answers even an IP literal on a later
// tick. Code that reads server.address().port right after listen(0) (the conformance
// suite's mock servers do) would then see null. While our listen() runs, dns.lookup for
// the literal 127.0.0.1 calls back at once, so the socket is bound before listen returns,
// exactly as it is for a listen() without a host.
'use strict';

const net = require('node:net');
const dns = require('node:dns');
const fs = require('node:fs');

const LOOPBACK = '127.0.0.1';
const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]', '::0']);

// Read the report descriptor once and hide it from child processes, which would see some
// other file behind the same number.
const reportFd = /^\d+$/.test(process.env.AGENTMCP_LISTEN_FD || '')
  ? Number(process.env.AGENTMCP_LISTEN_FD)
  : -1;
delete process.env.AGENTMCP_LISTEN_FD;

function report(fields) {
  if (reportFd < 0) return;
  try {
    fs.writeSync(reportFd, JSON.stringify(fields) + '\n');
  } catch {
    // The reader went away (the test ended); reporting is best effort.
  }
}

function isPortLike(v) {
  return v === undefined || v === null || typeof v === 'number' ||
    (typeof v === 'string' && /^\s*\d*\s*$/.test(v));
}

function isWildcard(host) {
  return host === undefined || host === null || WILDCARDS.has(host);
}

// rewrite returns the listen() arguments with the host forced to loopback, or null when
// the call is not a TCP listen on all interfaces (a pipe path, a handle, an fd, or an
// explicit non-wildcard host) and must pass through untouched.
function rewrite(args) {
  const a0 = args[0];
  if (args.length === 0 || typeof a0 === 'function') {
    // listen([cb]): a random port on all interfaces.
    return [0, LOOPBACK, ...args];
  }
  if (a0 !== null && typeof a0 === 'object') {
    // listen(options[, cb]) or listen(handle[, backlog][, cb]).
    if (a0.path !== undefined || a0.fd !== undefined || a0.handle !== undefined ||
        a0._handle !== undefined || !isPortLike(a0.port) || !isWildcard(a0.host)) {
      return null;
    }
    return [{ ...a0, port: a0.port ?? 0, host: LOOPBACK }, ...args.slice(1)];
  }
  if (!isPortLike(a0)) {
    return null; // listen(path): a Unix socket.
  }
  // listen(port[, host][, backlog][, cb]).
  const port = a0 ?? 0;
  if (typeof args[1] === 'string') {
    return isWildcard(args[1]) ? [port, LOOPBACK, ...args.slice(2)] : null;
  }
  return [port, LOOPBACK, ...args.slice(1)];
}

// syncLookup answers dns.lookup(LOOPBACK, ...) in the caller's tick and defers every
// other name to the real resolver.
function syncLookup(realLookup) {
  return function lookup(hostname, options, callback) {
    const cb = typeof options === 'function' ? options : callback;
    if (hostname !== LOOPBACK || typeof cb !== 'function') {
      return realLookup.apply(this, arguments);
    }
    if (options && typeof options === 'object' && options.all) {
      cb(null, [{ address: LOOPBACK, family: 4 }]);
    } else {
      cb(null, LOOPBACK, 4);
    }
    return undefined;
  };
}

// watch reports the outcome of one listen() call. Its listeners remove each other, so a
// server that retries listen() after an error reports each attempt once.
function watch(server) {
  if (reportFd < 0) return;
  const onListening = () => {
    server.removeListener('error', onError);
    const addr = server.address();
    if (addr && typeof addr === 'object') {
      report({ event: 'listening', address: addr.address, port: addr.port });
    }
  };
  // Observe a failed listen without changing what the server does about it: when no one
  // else listens for 'error', rethrow, so Node still fails as it would have.
  const onError = (err) => {
    server.removeListener('listening', onListening);
    if (err && typeof err === 'object' && err.syscall === 'listen' && err.port !== undefined) {
      report({ event: 'error', code: err.code, port: err.port, message: String(err.message) });
    }
    if (server.listenerCount('error') === 0) {
      throw err;
    }
  };
  server.once('listening', onListening);
  server.prependOnceListener('error', onError);
}

const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  watch(this);
  const rewritten = rewrite(args);
  if (rewritten === null) {
    return originalListen.apply(this, args);
  }
  const realLookup = dns.lookup;
  dns.lookup = syncLookup(realLookup);
  try {
    return originalListen.apply(this, rewritten);
  } finally {
    dns.lookup = realLookup;
  }
};
