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
  let busy = false, again = false;
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
        await swap(live, await response.text());
        for (const id of open) {
          const d = document.getElementById(id);
          if (d) d.open = true;
        }
        live.dataset.refreshes = String(Number(live.dataset.refreshes || 0) + 1);
        live.dispatchEvent(new Event("swapped", { bubbles: true }));  // seat.js: a new prompt, covers' clocks
      }
    } catch (e) {
      // offline for a moment: the next event (or the stream's reconnection) tries again
      live.dispatchEvent(new Event("lost", { bubbles: true }));  // seat.js closes the covers
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  // (A little later: leaving the field may be a tap on its button, which must not be swapped away.)
  live.addEventListener("focusout", () => { if (typing) { typing = false; setTimeout(refresh, 1000); } });
  // A seat's page in a messenger's app (app.js) has its session first; refused, the page says why and stays.
  (window.seatSession || Promise.resolve(true)).then((ready) => {
    if (!ready) return;
    if (live.dataset.signin) refresh();
    if (live.dataset.send) sendInPlace(live, refresh);
    followEvents(live.dataset.events, refresh);
  });
})();

// --- Forms posted in the background (data-send: the host's page, a seat's page) ----------------------------------
// Ordering the seats, adding a name, starting, recording the table's votes, renaming: the form is posted with
// X-Send and the page stays where it is (no reload, no jump to the top, no browser error page on a Wi-Fi blip);
// then the part is fetched again. While the server cannot be reached the same post is sent again (same nonce:
// counted once); one the server could not store (``notSaved``) is not: the page says so, the player taps again.
// The part's forms share one nonce until it is fetched again, so each tap gets its own by a suffix; one post at a
// time. (A prompt's buttons are seat.js's.) The page's line (``#sending``) says what its words (``#words``) have
// for each moment, "sending… / sent" on a seat's page; a moment the page has no words for clears the line.
function sendInPlace(live, refresh) {
  let sending = false;
  const status = document.getElementById("sending");
  const words = document.getElementById("words");
  const show = (key, kind, text) => {
    if (!status) return;
    text = text || (words && words.dataset[key]) || "";
    status.textContent = text;
    status.className = "sending " + kind;
    status.hidden = !text;
    if (kind === "done") setTimeout(() => { status.hidden = true; }, 2500);
  };
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (event.defaultPrevented || !(form instanceof HTMLFormElement) || !live.contains(form)) return;
    if (event.submitter && event.submitter.matches("button.choice")) return;
    event.preventDefault();
    if (sending) return;
    sending = true;
    const body = new URLSearchParams(new FormData(form));
    if (body.has("nonce")) body.set("nonce", `${body.get("nonce")}.${Math.random().toString(36).slice(2, 10)}`);
    form.classList.add("sending");
    show("sending", "busy");
    let answer = {};
    for (let delay = 1000; ; delay = Math.min(delay * 2, 8000)) {
      try {
        const response = await fetch(form.action, { method: "POST", body, headers: { "X-Send": "1" },
                                                    credentials: "same-origin", cache: "no-store" });
        if (notSaved(response)) {  // the server could not store it: nothing happened, the player taps again
          answer = { notSaved: true, ...(await response.json().catch(() => ({}))) };
          break;
        }
        if (response.status >= 500 || response.status === 429) throw new Error(String(response.status));
        if (!response.ok) { location.reload(); return; }  // no longer this browser's page: say why
        answer = await response.json();
        break;
      } catch (e) {
        show("offline", "offline");
        await new Promise((done) => setTimeout(done, delay));
      }
    }
    if (answer.notSaved) {  // the form stays as it is (a name typed stays typed) for the tap again
      show("notSaved", "refused", answer.reply);
      sending = false;
      form.classList.remove("sending");
      return;
    }
    if (answer.next) { location.assign(answer.next); return; }  // left the lobby; pass-and-play: passed on
    if (answer.counted) show("sent", "done");
    else show("movedOn", "refused", answer.reply);
    sending = false;
    form.classList.remove("sending");
    // A field left typed in would hold the refresh back (``refresh``); a button keeps the focus (``focusPlace``).
    const typed = document.activeElement;
    if (typed && typed.tagName === "INPUT" && live.contains(typed)) typed.blur();
    refresh();
  });
}

// A 503 that says nothing of the post was stored (the database was locked or could not be written): unlike a
// network blip it is not sent again by itself, for the player decides again on what the page shows now.
function notSaved(response) {
  return response.status === 503 && response.headers.get("X-Not-Saved") === "1";
}

// --- Swapping the live part in without a flash ---------------------------------------------------------------
// A picture whose address did not change keeps its element (no new fetch, no blank); a new one is loaded before
// the swap (for at most 3 s), and its reserved size keeps everything else in place meanwhile.
async function swap(live, markup) {
  // Parsed in an inert document: its pictures are not fetched there (an element made by this page's own
  // innerHTML would fetch its picture at once, even one the page keeps).
  const next = new DOMParser().parseFromString(`<body>${markup}</body>`, "text/html").body;
  const old = new Map();
  for (const img of live.querySelectorAll("img[src]")) {
    if (!old.has(img.getAttribute("src"))) old.set(img.getAttribute("src"), img);
  }
  const loading = [];
  for (const img of next.querySelectorAll("img[src]")) {
    const same = old.get(img.getAttribute("src"));
    if (same) {
      old.delete(img.getAttribute("src"));
      same.alt = img.alt;
      // A picture element is kept whole: an image moved into another one chooses its source again (a fetch).
      const keep = same.parentElement && same.parentElement.tagName === "PICTURE" ? same.parentElement : same;
      (keep === same ? img : img.parentElement).replaceWith(keep);
    } else {
      const early = new Image();  // fetched and decoded now, so that the swapped-in picture comes from the cache
      early.src = img.src;
      if (early.decode) loading.push(early.decode().catch(() => {}));
    }
  }
  if (loading.length) await Promise.race([Promise.all(loading), new Promise((done) => setTimeout(done, 3000))]);
  const place = focusPlace(live);
  live.replaceChildren(...[...next.childNodes].map((node) => document.adoptNode(node)));
  if (place) place();
  live.dispatchEvent(new Event("live:swapped"));
}

// A keyboard's or screen reader's place is kept across a swap: the control that had the focus gets it back in the
// new part (the same id, else the same kind of element with the same words, the same one of them), so a change at
// the table never throws the reader back to the top of the page.
function focusPlace(live) {
  const had = document.activeElement;
  if (!had || had === live || !live.contains(had)) return null;
  const words = had.textContent.trim();
  const alike = (root) => [...root.querySelectorAll(had.tagName)].filter((el) => el.textContent.trim() === words);
  const index = alike(live).indexOf(had);
  return () => {
    const again = (had.id && document.getElementById(had.id)) || alike(live)[Math.max(index, 0)];
    if (again && live.contains(again)) again.focus({ preventScroll: true });
  };
}

// --- The event stream, opened again after the server refused it -------------------------------------------------
// The browser reconnects by itself when a stream ends or the network drops, but not after an answer that is no
// stream (503 when the table or the server has too many open; 404 for a table gone): then EventSource is closed
// for good. Open it again after a while, longer each time (2.5-5 s, then up to a minute), at random within that,
// so that the pages a full server turned away do not all come back at once. Any open but the first may have
// missed a change (a locked phone, a restarted server, a refusal): the page fetches its part once more.
// The server ends each stream after a while and says so first ("renew"): that end is no loss (seat.js keeps its
// covers open); any other, or a renewal that does not open again, is ("lost").
function followEvents(url, changed) {
  let delay = 5000, missed = false;
  const open = () => {
    const events = new EventSource(url);
    let renewing = false;
    events.onmessage = changed;
    events.addEventListener("renew", () => { renewing = true; });
    events.onopen = () => { delay = 5000; if (missed) changed(); };
    events.onerror = () => {
      missed = true;
      const renewed = renewing && events.readyState === EventSource.CONNECTING;
      renewing = false;  // the next error, if its reconnection fails, is a loss
      if (renewed) return;
      document.dispatchEvent(new Event("lost"));  // the network or the server is gone for now
      if (events.readyState !== EventSource.CLOSED) return;
      setTimeout(open, delay * (0.5 + Math.random() / 2));
      delay = Math.min(delay * 2, 60000);
    };
  };
  open();
}
