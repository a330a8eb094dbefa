// Review page and queue: keyboard shortcuts, one-key scoring, the held submit with undo, transcript search,
// and the transcript/scoring switch on narrow screens. No framework, no build step, no inline script.
(() => {
  "use strict";

  const UNDO_SECONDS = 5;
  const SHORTCUTS_KEY = "veredicto.shortcuts";
  const criteria = Array.from(document.querySelectorAll(".criterion"));
  const reviewForm = document.getElementById("review-form");
  const nextForm = document.getElementById("next-form");
  const toggle = document.getElementById("shortcuts-toggle");
  // Locked (another supervisor) or read-only (a final review exists): no key may change anything here.
  const formActive = Boolean(reviewForm) && reviewForm.dataset.active === "true";
  let current = -1;
  let pending = null; // the held keyboard submit: {timer, tick}

  // WCAG 2.1.4: single-key shortcuts can be turned off; the choice is remembered in this browser.
  const shortcutsOn = () => localStorage.getItem(SHORTCUTS_KEY) !== "off";
  if (toggle) {
    toggle.checked = shortcutsOn();
    toggle.addEventListener("change", () => localStorage.setItem(SHORTCUTS_KEY, toggle.checked ? "on" : "off"));
  }

  // Shortcuts stay out of the way while the supervisor types; radio buttons and boxes are not typing.
  const isTyping = (element) =>
    element instanceof HTMLElement &&
    (element.isContentEditable ||
      element.tagName === "TEXTAREA" ||
      element.tagName === "SELECT" ||
      (element.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(element.type)));

  const marksOf = (key) =>
    Array.from(document.querySelectorAll("mark[data-criteria], mark[data-near]")).filter((mark) =>
      (mark.dataset.criteria || mark.dataset.near).split(" ").includes(key)
    );

  const radios = (panel) => Array.from(panel.querySelectorAll(".rating input[type=radio]"));

  function focusValue(panel) {
    const options = radios(panel);
    const target = options.find((radio) => radio.checked) || options[0];
    if (target && !target.disabled) target.focus({ preventScroll: true });
  }

  function showTranscriptMarks(key, scroll) {
    document.querySelectorAll("mark.active").forEach((mark) => mark.classList.remove("active"));
    const marks = marksOf(key);
    marks.forEach((mark) => mark.classList.add("active"));
    if (scroll && marks.length) marks[0].scrollIntoView({ block: "center" });
  }

  function select(index, { focus = true } = {}) {
    if (!criteria.length) return;
    current = Math.max(0, Math.min(criteria.length - 1, index));
    const panel = criteria[current];
    criteria.forEach((other, position) => other.classList.toggle("active", position === current));
    panel.scrollIntoView({ block: "nearest" });
    showTranscriptMarks(panel.dataset.key, true);
    if (focus) focusValue(panel);
  }

  // A value that differs from the model's needs a comment: take the supervisor there.
  function afterValue(panel, viaKey) {
    const chosen = radios(panel).find((radio) => radio.checked);
    const comment = panel.querySelector("textarea");
    const model = panel.dataset.model;
    const needsComment = model !== "" && chosen && chosen.value !== model && comment && !comment.value.trim();
    if (needsComment) comment.focus();
    else if (viaKey && current < criteria.length - 1) select(current + 1);
  }

  function choose(key) {
    if (current < 0) return false;
    const panel = criteria[current];
    const wanted = key === "x" ? "na" : key;
    const radio = radios(panel).find((option) => option.value === wanted);
    if (!radio || radio.disabled) return false;
    radio.checked = true;
    afterValue(panel, true);
    return true;
  }

  // The keyboard submit is held for a few seconds with an Undo: a stray key costs nothing.
  const undoBar = document.getElementById("undo-bar");
  const undoText = document.getElementById("undo-text");
  const undoButton = document.getElementById("undo");

  function cancelPending() {
    if (!pending) return;
    clearInterval(pending.timer);
    pending = null;
    undoBar.hidden = true;
  }

  function decide(decision) {
    if (!formActive || pending) return;
    const button = reviewForm.querySelector(`button[name="decision"][value="${decision}"]`);
    if (!button) return;
    let left = UNDO_SECONDS;
    const label = button.textContent.trim().replace(/\s+\S$/, ""); // without its key hint
    const render = () => {
      undoText.textContent = undoBar.dataset.message.replace("{decision}", label).replace("{seconds}", left);
    };
    undoBar.hidden = false;
    render();
    undoButton.focus();
    pending = {
      timer: setInterval(() => {
        left -= 1;
        if (left > 0) return render();
        cancelPending();
        reviewForm.requestSubmit(button);
      }, 1000),
    };
  }
  if (undoButton) undoButton.addEventListener("click", cancelPending);

  criteria.forEach((panel, index) => {
    panel.addEventListener("click", (event) => {
      if (!isTyping(event.target)) select(index, { focus: false });
    });
    radios(panel).forEach((radio) => radio.addEventListener("change", () => afterValue(panel, false)));
    const comment = panel.querySelector("textarea");
    if (comment) {
      comment.addEventListener("keydown", (event) => {
        if (event.key === "Escape") {
          event.preventDefault();
          event.stopPropagation();
          select(index);
        }
      });
    }
    panel.querySelectorAll(".show-quote").forEach((button) =>
      button.addEventListener("click", () => {
        showTranscriptMarks(panel.dataset.key, true);
        showPane("transcript");
      })
    );
  });

  // A highlight selects the criterion it is evidence for (click, Enter or Space: they are focusable).
  document.querySelectorAll("mark[data-criteria], mark[data-near]").forEach((mark) => {
    const open = () => {
      const key = (mark.dataset.criteria || mark.dataset.near).split(" ")[0];
      showPane("scoring");
      select(criteria.findIndex((panel) => panel.dataset.key === key));
    };
    mark.addEventListener("click", open);
    mark.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open();
      }
    });
  });

  // Transcript search: the turns that contain the words are marked; Enter goes to the next one.
  const search = document.getElementById("transcript-search");
  const searchCount = document.getElementById("search-count");
  let hits = [];
  let hit = -1;
  const fold = (text) => text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
  if (search) {
    search.addEventListener("input", () => {
      const query = fold(search.value.trim());
      hits = [];
      document.querySelectorAll(".turn").forEach((turn) => {
        const found = query !== "" && fold(turn.querySelector(".said").textContent).includes(query);
        turn.classList.toggle("hit", found);
        if (found) hits.push(turn);
      });
      hit = -1;
      searchCount.textContent = query ? `${hits.length} / ${document.querySelectorAll(".turn").length}` : "";
      if (hits.length) {
        hit = 0;
        hits[0].scrollIntoView({ block: "center" });
      }
    });
    search.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && hits.length) {
        event.preventDefault();
        hit = (hit + 1) % hits.length;
        hits[hit].scrollIntoView({ block: "center" });
      } else if (event.key === "Escape") {
        search.blur();
      }
    });
  }

  // Narrow screens show the transcript or the scoring, switched by two buttons.
  const grid = document.getElementById("review-grid");
  function showPane(name) {
    if (!grid) return;
    grid.dataset.show = name;
    document.querySelectorAll(".view-toggle button").forEach((button) =>
      button.setAttribute("aria-pressed", String(button.dataset.show === name))
    );
  }
  document.querySelectorAll(".view-toggle button").forEach((button) =>
    button.addEventListener("click", () => showPane(button.dataset.show))
  );
  showPane("scoring"); // without this script both stay shown, stacked

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    if (event.key === "Escape" && pending) {
      event.preventDefault();
      cancelPending();
      return;
    }
    if (!shortcutsOn()) return;
    const actions = {
      j: () => select(current + 1),
      k: () => select(current - 1),
      a: () => decide("approve"),
      r: () => decide("reject"),
      n: () => nextForm && nextForm.requestSubmit(),
      "/": () => search && search.focus(),
    };
    let handled = false;
    if (actions[event.key]) {
      actions[event.key]();
      handled = true;
    } else if (formActive && (/^[0-9]$/.test(event.key) || event.key === "x")) {
      handled = choose(event.key);
    }
    if (handled) event.preventDefault();
  });

  // Start where the work is: the error summary after a refused submit, else the first criterion.
  const summary = document.getElementById("error-summary");
  if (summary) {
    summary.scrollIntoView({ block: "center" });
    summary.focus();
  } else if (formActive && criteria.length) {
    select(0);
    window.scrollTo(0, 0);
  }
})();
