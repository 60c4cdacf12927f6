// The table screen: the latest results fitted to the screen, what really happened scrolling by itself, and,
// when someone turns it on here, each new public result read aloud in the table's language. Only texts the
// screen shows with data-say are ever spoken, and the screen shows public results only.
(() => {
  const live = document.getElementById("live");
  const toggle = document.getElementById("narrate");
  if (!live) return;
  const KEY = "moderator-narrate";
  const heard = new Set();
  const said = () => [...live.querySelectorAll("[data-say]")].map((el) => el.dataset.say);
  // What was there before narration (or this page) started is not read out: only what happens from now on.
  const hearAll = () => said().forEach((text) => heard.add(text));
  function speak() {
    const fresh = said().filter((text) => !heard.has(text)).reverse(); // newest first on screen: read oldest first
    fresh.forEach((text) => heard.add(text));
    if (!toggle || !toggle.checked || !window.speechSynthesis) return;
    for (const text of fresh) {
      const utterance = new SpeechSynthesisUtterance(text);
      utterance.lang = document.documentElement.lang;
      window.speechSynthesis.speak(utterance);
    }
  }
  // The newest results first; older ones leave rather than run off the bottom of the screen.
  function fit() {
    for (const box of live.querySelectorAll(".latest, .side")) {
      let items = box.querySelectorAll(".msg");
      while (box.scrollHeight > box.clientHeight + 1 && items.length > 1) {
        items[items.length - 1].remove();
        items = box.querySelectorAll(".msg");
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
  live.addEventListener("live:swapped", () => { fit(); speak(); });
})();
