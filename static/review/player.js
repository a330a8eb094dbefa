// The review page's audio player: turns play from their start, verified quotes play exactly
// their span, `p` (read by review.js) plays the current criterion's quote, the turn being heard is highlighted.
// No inline script: the data comes from the json_script block in _player.html.
(() => {
  "use strict";

  const audio = document.getElementById("call-audio");
  const dataNode = document.getElementById("player-data");
  const section = document.getElementById("player");
  if (!audio || !dataNode || !section) return;
  const data = JSON.parse(dataNode.textContent);
  const turns = data.turns
    .map((turn) => ({ ...turn, element: document.getElementById(`turn-${turn.index}`) }))
    .filter((turn) => turn.element);
  let stopAt = null;

  const clock = (ms) => {
    const seconds = Math.floor(ms / 1000);
    return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  };

  function play(startMs, endMs) {
    audio.currentTime = startMs / 1000;
    stopAt = endMs == null ? null : endMs / 1000;
    audio.play();
    requestAnimationFrame(watch);
  }

  // Checked every frame, not on timeupdate (4 times a second): a quote's span ends where its last word does.
  function watch() {
    highlight();
    if (stopAt !== null && audio.currentTime >= stopAt) {
      audio.pause();
      stopAt = null;
    }
    if (!audio.paused) requestAnimationFrame(watch);
  }

  function highlight() {
    const now = audio.currentTime * 1000;
    turns.forEach((turn) => {
      const playing = !audio.paused && turn.start_ms <= now && now < turn.end_ms;
      turn.element.classList.toggle("playing", playing);
      if (playing) turn.element.setAttribute("aria-current", "true");
      else turn.element.removeAttribute("aria-current");
    });
  }

  turns.forEach((turn) => {
    turn.element.classList.add("playable");
    turn.element.tabIndex = 0;
    turn.element.title = `${section.dataset.playLabel} · ${clock(turn.start_ms)}`;
    turn.element.addEventListener("click", () => play(turn.start_ms, null));
    turn.element.addEventListener("keydown", (event) => {
      if (event.key === "Enter") play(turn.start_ms, null);
    });
  });

  Object.entries(data.quotes).forEach(([key, span]) => {
    const panel = document.querySelector(`.criterion[data-key="${CSS.escape(key)}"]`);
    const evidence = panel && panel.querySelector(".evidence");
    if (!evidence) return;
    if (span) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "play-quote";
      button.dataset.start = span[0];
      button.dataset.end = span[1];
      button.textContent = `▶ ${section.dataset.playLabel} (${clock(span[0])}–${clock(span[1])})`;
      button.addEventListener("click", (event) => {
        event.stopPropagation();
        play(span[0], span[1]);
      });
      evidence.after(button);
    } else {
      const note = document.createElement("small");
      note.className = "muted no-span";
      note.textContent = section.dataset.noSpanLabel;
      evidence.after(note);
    }
  });

  audio.addEventListener("play", () => requestAnimationFrame(watch));
  audio.addEventListener("pause", highlight);
  audio.addEventListener("seeked", highlight);

  // `p` is read by review.js with the page's other keys (one rule for what counts as typing, and the
  // shortcuts switch); it names the current criterion and the quote plays here.
  document.addEventListener("veredicto:play-quote", (event) => {
    const span = data.quotes[event.detail];
    if (span) play(span[0], span[1]);
  });
})();
