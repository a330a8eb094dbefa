// Review page and queue: keyboard shortcuts, one-key scoring in compact rows, the undo toast after a submit,
// transcript search, and the transcript/scoring switch on narrow screens. No framework, no build step, no
// inline script. The player (review/player.js) plays a quote when this script asks (`p`).
(() => {
  "use strict";

  const SHORTCUTS_KEY = "veredicto.shortcuts";
  const criteria = Array.from(document.querySelectorAll(".criterion"));
  // The review page's form, or the calibration page's: the same scoring component (templates/review/_criterion.html).
  const reviewForm = document.querySelector("form.criteria");
  const nextForm = document.getElementById("next-form");
  const toggle = document.getElementById("shortcuts-toggle");
  // Locked (another supervisor) or read-only (a final review exists): no key may change anything here.
  const formActive = Boolean(reviewForm) && reviewForm.dataset.active === "true";
  let current = -1;
  if (reviewForm) reviewForm.classList.add("compact");

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

  // What sits over the bottom of the window: the decision bar, where it is sticky (not on a phone).
  function coveredBelow() {
    const bar = document.getElementById("decision-bar");
    if (!bar || getComputedStyle(bar).position !== "sticky") return 0;
    return bar.getBoundingClientRect().height;
  }

  // Scroll just enough that `element` is inside the window and clear of the sticky decision bar.
  function reveal(element) {
    const box = element.getBoundingClientRect();
    const bottom = window.innerHeight - coveredBelow() - 8;
    if (box.bottom > bottom) window.scrollBy(0, Math.min(box.bottom - bottom, box.top - 8));
    else if (box.top < 8) window.scrollBy(0, box.top - 8);
  }

  function focusValue(panel) {
    const options = radios(panel);
    const target = options.find((radio) => radio.checked) || options[0];
    if (target && !target.disabled) target.focus({ preventScroll: true });
    reveal(panel.querySelector(".criterion-row") || panel);
  }

  function setOpen(panel, open) {
    panel.classList.toggle("open", open);
    const button = panel.querySelector(".more-toggle");
    if (button) button.setAttribute("aria-expanded", String(open));
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
    showTranscriptMarks(panel.dataset.key, true);
    if (focus) focusValue(panel);
  }

  // A value that differs from the model's needs a comment: take the supervisor there.
  function afterValue(panel, viaKey) {
    const chosen = radios(panel).find((radio) => radio.checked);
    const comment = panel.querySelector("textarea");
    const model = panel.dataset.model;
    const needsComment = model !== "" && chosen && chosen.value !== model && comment && !comment.value.trim();
    if (needsComment) {
      setOpen(panel, true);
      comment.focus({ preventScroll: true });
      reveal(comment);
    } else if (viaKey && current < criteria.length - 1) select(current + 1);
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

  // A key submits at once: the review is stored, and the next page's toast offers Undo (reviews.views.undo).
  // The form's buttons say their own key (data-shortcut): approve and reject here, save on a calibration.
  // Once: a second key before the next page loads would post the review again (refused as a second final one).
  let submitted = false;
  function submitWith(key) {
    const button = formActive && reviewForm.querySelector(`button[data-shortcut="${key}"]`);
    if (!button) return false;
    if (!submitted) reviewForm.requestSubmit(button);
    submitted = true;
    return true;
  }

  const toast = document.getElementById("undo-toast");
  if (toast) setTimeout(() => (toast.hidden = true), Number(toast.dataset.seconds) * 1000);
  const undo = () => toast && !toast.hidden && toast.querySelector("button").click();

  // `p` plays the current criterion's quote; the player listens (it is absent on a call without audio).
  function playQuote() {
    const panel = criteria[current] || criteria[0];
    if (panel) document.dispatchEvent(new CustomEvent("veredicto:play-quote", { detail: panel.dataset.key }));
  }

  function toggleOpen() {
    const panel = criteria[current];
    if (!panel) return;
    setOpen(panel, !panel.classList.contains("open"));
    focusValue(panel);
  }

  criteria.forEach((panel, index) => {
    panel.addEventListener("click", (event) => {
      if (!isTyping(event.target)) select(index, { focus: false });
    });
    radios(panel).forEach((radio) => radio.addEventListener("change", () => afterValue(panel, false)));
    // Open where the server said so (an error, a comment already written); else one row.
    setOpen(panel, panel.classList.contains("open"));
    const more = panel.querySelector(".more-toggle");
    if (more) more.addEventListener("click", () => setOpen(panel, !panel.classList.contains("open")));
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
    if (!shortcutsOn()) return;
    const actions = {
      j: () => select(current + 1),
      k: () => select(current - 1),
      n: () => nextForm && nextForm.requestSubmit(),
      u: undo,
      p: playQuote,
      e: toggleOpen,
      "/": () => search && search.focus(),
    };
    let handled = false;
    if (actions[event.key]) {
      actions[event.key]();
      handled = true;
    } else if (formActive && (/^[0-9]$/.test(event.key) || event.key === "x")) {
      handled = choose(event.key);
    } else if (/^[a-z]$/.test(event.key)) {
      handled = submitWith(event.key);
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
