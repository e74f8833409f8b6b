// The watch message: the routers, services and servers the page shows
// right now, sent on the WebSocket so that every "stats" sample carries
// their rates however large the configuration (the server bounds a
// sample to MaxStatsObjects per kind: the watched ones, then the failing
// and busiest). Read from the DOM, so whatever a page draws is watched:
// rows of the lists (one page of them), boxes of a route picture, server
// tables, "Failing now".

const MAX = 250; // per kind, as the server reads it

let socket = null;
let sent = '';
let timer = null;

// names collects the attribute attr of every element matching each
// [selector, attr] pair, once each, at most MAX.
function names(...pairs) {
  const out = new Set();
  for (const [sel, attr] of pairs) {
    for (const e of document.querySelectorAll(sel)) {
      const v = e.getAttribute(attr);
      if (v) out.add(v);
    }
  }
  return [...out].slice(0, MAX);
}

function collect() {
  return {
    routers: names(['#routers tbody tr[data-name]', 'data-name'], ['[data-state-router]', 'data-state-router'], ['#failing li[data-router]', 'data-router']),
    services: names(['#services tbody tr[data-name]', 'data-name'], ['[data-state-service]', 'data-state-service']),
    servers: names(['[data-server]', 'data-server'], ['[data-row-server]', 'data-row-server'], ['.server[data-url]', 'data-url']),
  };
}

function send() {
  timer = null;
  if (!socket || socket.readyState !== WebSocket.OPEN) return;
  const body = JSON.stringify({ watch: collect() });
  if (body === sent) return;
  sent = body;
  socket.send(body);
}

// watchOn makes ws the socket watches are sent on (a new connection
// starts with nothing watched) and sends the page's at once.
export function watchOn(ws) {
  socket = ws;
  sent = '';
  send();
}

// scheduleWatch sends the page's watch soon, when it changed.
export function scheduleWatch() {
  if (!timer) timer = setTimeout(send, 100);
}
