// A seat's page, on a phone or passed around on the host's device (after live.js's part is in place).
// - The decision owed is brought into view when it arrives, the title says so and the phone vibrates where the
//   browser allows (a tap on the page earlier); style.css keeps it pinned at the top while it is owed.
// - A button's choice is sent in the background (never a page load, so no browser error page on a Wi-Fi blip):
//   "sending…", then "sent"; while the server cannot be reached it is sent again, with the same nonce, until it
//   is: counted once, or refused with the service's reply if the question moved on meanwhile. A tap the server
//   could not store (503 with X-Not-Saved, live.js's ``notSaved``) says so and waits for the player to tap again.
// - Covers close by themselves: when the page is hidden or left, when the network goes (live.js's "lost"; never
//   the event stream's renewal), when a messenger's app hides it (app.js's "covers:close"), and a while after
//   being opened (data-cover-seconds on #words).
// - For a screen reader, a decision owed is announced once, through a polite live region (#announce): the
//   question, or for one behind a cover what the cover says it hides; the focus moves to it only if the page was
//   idle (no key, tap or focus change for a while), never away from what the reader is doing.
(() => {
  const live = document.getElementById("live");
  const words = document.getElementById("words");
  const status = document.getElementById("sending");
  if (!live || !words || !status) return;
  const say = words.dataset;
  const coverSeconds = Number(say.coverSeconds || 60);
  const title = document.title;
  const announce = document.getElementById("announce");
  const IDLE = 10000;  // ms without a key, a tap or a focus change: the page is idle
  let seen = null;
  let lastInput = 0;
  for (const kind of ["keydown", "pointerdown", "focusin", "input"]) {
    document.addEventListener(kind, () => { lastInput = Date.now(); }, true);
  }
  function tell(owed) {
    if (!announce) return;
    if (!owed) { announce.textContent = ""; return; }
    const cover = owed.querySelector("details.secret > summary > span");
    const question = owed.querySelector(".msg");
    announce.textContent = `${say.turn}: ${(cover || question || owed).textContent.trim()}`;
  }

  // --- the decision owed ---------------------------------------------------------------------------------
  function noticePrompt(first) {
    const owed = document.getElementById("owed");
    const fresh = owed && !owed.dataset.waiting ? owed.dataset.decision : null;
    document.title = fresh ? `\u25cf ${say.turn} \u00b7 ${title}` : title;
    if (fresh && fresh !== seen) {
      if (!first) {
        owed.scrollIntoView({ block: "start", behavior: "smooth" });
        try { if (navigator.vibrate) navigator.vibrate([120, 60, 120]); } catch (e) { /* not allowed here */ }
        if (Date.now() - lastInput > IDLE) owed.focus({ preventScroll: true });
      }
      // (On opening the page, a moment later: a live region's first words are read only once it is in place.)
      if (first) setTimeout(() => tell(owed), 300);
      else tell(owed);
      live.dataset.noticed = fresh;
    } else if (!fresh) {
      tell(null);
    }
    seen = fresh;
  }

  // --- covers ----------------------------------------------------------------------------------------------
  const opened = new Map();  // a cover's id -> when it was opened (a swap that keeps it open keeps the time)
  function closeCovers() {
    for (const d of document.querySelectorAll("details.secret[open]")) d.open = false;
    opened.clear();
  }
  document.addEventListener("toggle", (event) => {
    const d = event.target;
    if (!(d instanceof HTMLDetailsElement) || !d.id) return;
    if (d.open && !opened.has(d.id)) opened.set(d.id, Date.now());
    else if (!d.open && d.isConnected) opened.delete(d.id);
  }, true);
  setInterval(() => {
    const now = Date.now();
    for (const [id, at] of opened) {
      if (now - at < coverSeconds * 1000) continue;
      const d = document.getElementById(id);
      if (d) d.open = false;
      opened.delete(id);
    }
  }, 1000);
  document.addEventListener("visibilitychange", () => { if (document.hidden) closeCovers(); });
  window.addEventListener("pagehide", closeCovers);
  window.addEventListener("pageshow", (event) => { if (event.persisted) closeCovers(); });
  window.addEventListener("offline", closeCovers);
  document.addEventListener("lost", closeCovers);
  document.addEventListener("covers:close", closeCovers);  // a messenger's app hid the page (app.js)
  live.addEventListener("lost", closeCovers);
  live.addEventListener("swapped", () => noticePrompt(false));

  // --- choices sent in the background -------------------------------------------------------------------
  let pending = null;  // a choice waiting to be sent again: { timer, attempt }
  let sending = false;
  function show(text, kind) {
    status.textContent = text;
    status.className = "sending " + kind;
    status.hidden = !text;
    clearTimeout(show.timer);
    if (kind === "done") show.timer = setTimeout(() => { status.hidden = true; }, 2500);
  }
  function send(form, button) {
    const body = new URLSearchParams(new FormData(form));
    const url = form.action;
    for (const b of live.querySelectorAll("button.choice")) b.disabled = true;
    button.classList.add("picked");
    show(say.sending, "busy");
    let delay = 1000;
    const attempt = async () => {
      pending = null;
      sending = true;
      try {
        const response = await fetch(url, { method: "POST", body, headers: { "X-Send": "1" },
                                             credentials: "same-origin", cache: "no-store" });
        if (notSaved(response)) {
          // Reached the server, which could not store it (nothing happened): the player taps again, here.
          const answer = await response.json().catch(() => ({}));
          show(answer.reply || say.notSaved, "refused");
          button.classList.remove("picked");
        } else {
          if (response.status >= 500 || response.status === 429) throw new Error(String(response.status));
          if (!response.ok) { location.reload(); return; }  // no longer this browser's seat: say why
          const answer = await response.json();
          if (answer.counted) show(say.sent, "done");
          else show(answer.reply || say.movedOn, "refused");
          if (answer.next) { closeCovers(); location.assign(answer.next); return; }
        }
      } catch (e) {
        show(say.offline, "offline");
        pending = { timer: setTimeout(attempt, delay), attempt };
        delay = Math.min(delay * 2, 8000);
        return;
      } finally {
        sending = false;
      }
      for (const b of live.querySelectorAll("button.choice")) b.disabled = false;
    };
    attempt();
  }
  window.addEventListener("online", () => {
    if (pending !== null) { clearTimeout(pending.timer); pending.attempt(); }  // back: at once
  });
  document.addEventListener("submit", (event) => {
    const form = event.target;
    const button = event.submitter;
    if (!(form instanceof HTMLFormElement) || !live.contains(form) || !button || !button.matches("button.choice")) {
      return;
    }
    event.preventDefault();
    if (pending !== null || sending) return;  // one choice at a time: the first is still on its way
    send(form, button);
  });
  noticePrompt(true);
})();
