// callback.js: the page an OAuth popup lands on. After a success it closes
// the popup (the dashboard that opened it updates from its live stream);
// after a failure it stays, showing the error.
if (document.body.dataset.outcome === "ok") window.close();
