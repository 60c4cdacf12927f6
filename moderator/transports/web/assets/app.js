// A seat's page inside Telegram (a Mini App), before live.js: who the page is for, and Telegram's look.
// - Whose seat: what Telegram signed for the person who opened the page (initData), from Telegram's own script
//   when the page loaded it (window.Telegram.WebApp), else from the address's fragment, where every Telegram
//   client puts it (#tgWebAppData=…; a fragment never reaches a server or its log). It is posted once, in a
//   form's body, for the seat's session (a cookie); live.js waits for that (window.seatSession) before it
//   fetches the seat's part. Refused (not signed by our bot, no seat at this table), the page says why.
// - Telegram's colours and viewport, where Telegram gives them (its script's themeParams and events, else
//   #tgWebAppThemeParams=…): the --tg-theme-* and --tg-viewport-* properties Telegram's script would set, and
//   the pairs of those colours that read well (``paint``) for the page.
// - Covers close when Telegram hides the page (its "deactivated" event), as they do when the page is hidden.
window.seatSession = (() => {
  const live = document.getElementById("live");
  if (!live || !live.dataset.signin) return Promise.resolve(true);
  const fragment = new URLSearchParams(location.hash.slice(1));
  const bridge = window.Telegram && window.Telegram.WebApp;
  const root = document.documentElement;
  const COLOUR = /^#[0-9a-f]{3,8}$/i;

  // Telegram's colours are the person's theme, not checked for contrast (its default dark theme's buttons are
  // 3.7:1): a pair is taken only where it reads (text 4.5:1; the page's buttons, bold and 20px, are large text:
  // 3:1), as --app-* properties that style.css uses; else ours, light or dark as Telegram's background is. The
  // --tg-theme-* properties are set as Telegram's own script sets them, for nothing here to read unchecked.
  function luminance(hex) {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  }
  function contrast(a, b) {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  }
  const FULL = /^#[0-9a-f]{6}$/i;
  function paint(theme) {
    theme = theme || {};
    for (const [key, value] of Object.entries(theme)) {
      if (/^[a-z_]+$/.test(key) && COLOUR.test(String(value))) {
        root.style.setProperty(`--tg-theme-${key.replace(/_/g, "-")}`, value);
      }
    }
    const take = (name, colour, against, ratio) => {
      const ok = FULL.test(String(colour)) && FULL.test(String(against)) && contrast(colour, against) >= ratio;
      if (ok) root.style.setProperty(name, colour); else root.style.removeProperty(name);
      return ok;
    };
    const bg = theme.bg_color;
    if (!take("--app-text", theme.text_color, bg, 4.5)) return;  // unreadable or none: our colours
    root.style.setProperty("--app-bg", bg);
    const dark = luminance(bg) < 0.18;
    root.style.colorScheme = dark ? "dark" : "light";  // the browser's own controls, as the background is
    root.dataset.scheme = dark ? "dark" : "light";  // our muted and accent words, likewise (style.css)
    take("--app-link", theme.link_color, bg, 4.5);
    take("--app-hint", theme.hint_color, bg, 4.5);
    if (take("--app-button", theme.button_color, theme.button_text_color, 3)) {
      root.style.setProperty("--app-button-text", theme.button_text_color);
    } else {
      root.style.removeProperty("--app-button-text");
    }
  }
  function fromFragment() {
    try { return JSON.parse(fragment.get("tgWebAppThemeParams") || "{}"); } catch (e) { return {}; }
  }
  function viewport() {
    if (!bridge) return;
    if (bridge.viewportHeight) root.style.setProperty("--tg-viewport-height", `${bridge.viewportHeight}px`);
    if (bridge.viewportStableHeight) {
      root.style.setProperty("--tg-viewport-stable-height", `${bridge.viewportStableHeight}px`);
    }
  }
  const hide = () => document.dispatchEvent(new Event("covers:close"));
  paint(bridge && bridge.themeParams && Object.keys(bridge.themeParams).length ? bridge.themeParams : fromFragment());
  if (bridge) {
    try {
      bridge.ready();
      bridge.expand();
      viewport();
      bridge.onEvent("themeChanged", () => paint(bridge.themeParams));
      bridge.onEvent("viewportChanged", viewport);
      bridge.onEvent("deactivated", hide);
    } catch (e) { /* an older Telegram: its defaults */ }
  }

  const signed = (bridge && bridge.initData) || fragment.get("tgWebAppData") || "";
  const refuse = (text) => {
    const line = document.createElement("h1");
    line.className = "msg";
    line.textContent = text;
    live.replaceChildren(line);
    return false;
  };
  const unsigned = document.getElementById("app-words").dataset.unsigned;
  if (!signed) return Promise.resolve(refuse(unsigned));
  return (async () => {
    for (let delay = 1000; ; delay = Math.min(delay * 2, 8000)) {
      try {
        const response = await fetch(live.dataset.signin, {
          method: "POST", body: new URLSearchParams({ init_data: signed }), credentials: "same-origin",
          cache: "no-store",
        });
        if (response.status >= 500 || response.status === 429) throw new Error(String(response.status));
        const answer = await response.json().catch(() => ({}));
        return response.ok && answer.ok ? true : refuse(answer.reply || unsigned);
      } catch (e) {
        await new Promise((done) => setTimeout(done, delay));  // offline for a moment: again
      }
    }
  })();
})();
