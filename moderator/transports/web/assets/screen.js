// The table screen: the story fitted to the screen, what really happened scrolling by itself, and, when someone
// turns it on here, every public result read aloud once, in the order things happened, in the table's language.
// The service gives each public result an id (#told: the game's results, public only); nothing else is spoken,
// and a result is spoken once however often it is shown (two alike are two results, each with its own id).
(() => {
  const live = document.getElementById("live");
  const toggle = document.getElementById("narrate");
  if (!live) return;
  const KEY = "moderator-narrate";
  const heard = new Set();
  function told() {
    const list = document.getElementById("told");
    try { return list ? JSON.parse(list.textContent) : []; } catch (e) { return []; }
  }
  // What was told before this page opened (or before narration was turned on) is not read out: only what
  // happens from now on.
  const hearAll = () => told().forEach((result) => heard.add(result.id));
  function speak() {
    const fresh = told().filter((result) => !heard.has(result.id));
    fresh.forEach((result) => heard.add(result.id));
    if (!toggle || !toggle.checked || !window.speechSynthesis) return;
    for (const result of fresh) {
      const utterance = new SpeechSynthesisUtterance(result.text);
      utterance.lang = document.documentElement.lang;
      window.speechSynthesis.speak(utterance);
    }
  }
  // The story in large type; where it would not fit, smaller (--fit down to 0.7; screen.css keeps every word at
  // 24 px at 1080p or more), never cut.
  // Where even that is too much (a table that claimed a lot), the oldest claims give way, never a result: those
  // of the least recent result first (the panels say their first result's id), each block's oldest first.
  function fit() {
    const side = live.querySelector(".tv .side");
    if (!side) return;
    const fits = () => side.scrollHeight <= side.clientHeight + 1;
    for (let scale = 1; scale >= 0.7; scale -= 0.025) {
      live.style.setProperty("--fit", scale.toFixed(3));
      if (fits()) return;
    }
    const age = (panel) => Number((panel.querySelector("[data-result]") || {dataset: {}}).dataset.result
      ?.split(".")[1] || 0);
    const panels = [...side.querySelectorAll(".story")].sort((a, b) => age(a) - age(b));
    for (const panel of panels) {
      for (const claim of [...panel.querySelectorAll(".claims .claim")]) {
        if (fits()) return;
        const block = claim.parentElement;
        claim.remove();
        if (!block.querySelector(".claim")) block.remove();
      }
    }
  }
  // What really happened is longer than a screen: it scrolls slowly, then starts again from the top.
  let pause = 0;
  setInterval(() => {
    const truth = document.getElementById("truth");
    if (!truth || truth.scrollHeight <= truth.clientHeight) return;
    if (pause > 0) { pause -= 1; return; }
    if (truth.scrollTop + truth.clientHeight >= truth.scrollHeight - 1) { truth.scrollTop = 0; pause = 60; return; }
    truth.scrollTop += 1;
  }, 50);
  if (toggle) {
    toggle.checked = localStorage.getItem(KEY) === "on";
    toggle.addEventListener("change", () => {
      localStorage.setItem(KEY, toggle.checked ? "on" : "off");
      if (!toggle.checked && window.speechSynthesis) window.speechSynthesis.cancel();
    });
  }
  hearAll();
  fit();
  window.addEventListener("resize", fit);
  live.addEventListener("live:swapped", () => { fit(); speak(); });
})();
