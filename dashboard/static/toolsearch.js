// toolsearch.js: the search box of the tool list. It asks the agent's
// tool search (GET .../tools?q=) as the user types, a moment after the
// last key, and hands the ranked matches to show (null when the box is
// empty). An answer that comes back after a newer query is dropped.

const WAIT_MS = 150;
const LIMIT = 20;

export function toolSearch(conn, input, status, show) {
  let timer = null;
  let seq = 0;
  const run = async () => {
    const q = input.value.trim();
    const mine = ++seq;
    if (!q) {
      status.textContent = "";
      show(null);
      return;
    }
    try {
      const matches = await conn.searchTools(q, { limit: LIMIT });
      if (mine !== seq) return;
      status.textContent = matches.length === 0 ? `No tool matches “${q}”.` : `${matches.length} best matches, best first`;
      show(matches);
    } catch (e) {
      if (mine !== seq) return;
      status.textContent = `Search failed (${e.code || "network"}): ${e.message}`;
      show([]);
    }
  };
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(run, WAIT_MS);
  };
  input.addEventListener("input", later);
  return {
    // active reports whether the box holds a query.
    active: () => input.value.trim() !== "",
    // refresh searches again (the catalog changed).
    refresh: later,
  };
}
