// callback.js: the page an OAuth popup lands on. After a success it closes
// the popup (the dashboard that opened it updates from its live stream);
// after a failure, or a callback that changed nothing (the server was
// already authorized), it stays, saying so.
if (document.body.dataset.outcome === "ok") window.close();
