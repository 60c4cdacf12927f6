// The live part of a page follows the table's event stream: on each change it is fetched again and swapped in.
// Covers the reader opened stay open across a refresh; nothing else is kept in the browser.
// A form with data-confirm (ending the game) asks first.
document.addEventListener("submit", (event) => {
  const ask = event.target.dataset && event.target.dataset.confirm;
  if (ask && !window.confirm(ask)) event.preventDefault();
});
(() => {
  const live = document.getElementById("live");
  if (!live) return;
  let busy = false, again = false, opened = false;
  let typing = false;
  async function refresh() {
    // Someone typing a name in the live part would lose it: refresh when they leave the field instead.
    const field = document.activeElement;
    if (field && field.tagName === "INPUT" && live.contains(field)) { typing = true; return; }
    if (busy) { again = true; return; }
    busy = true;
    try {
      const open = [...live.querySelectorAll("details[open][id]")].map((d) => d.id);
      const response = await fetch(live.dataset.src, { cache: "no-store", credentials: "same-origin" });
      // No longer this browser's page (the seat was removed): show why, as a reload would.
      if (response.status === 403 || response.status === 404) { location.reload(); return; }
      if (response.ok) {
        live.innerHTML = await response.text();
        for (const id of open) {
          const d = document.getElementById(id);
          if (d) d.open = true;
        }
        live.dataset.refreshes = String(Number(live.dataset.refreshes || 0) + 1);
      }
    } catch (e) {
      // offline for a moment: the next event (or the stream's reconnection) tries again
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  // (A little later: leaving the field may be a tap on its button, which must not be swapped away.)
  live.addEventListener("focusout", () => { if (typing) { typing = false; setTimeout(refresh, 1000); } });
  const events = new EventSource(live.dataset.events);
  events.onmessage = refresh;
  // A reconnection may have missed a change (a locked phone, a restarted server): fetch once more.
  events.onopen = () => { if (opened) refresh(); opened = true; };
})();
