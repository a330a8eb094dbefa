// Review page and queue: keyboard shortcuts and scroll-to-quote. No framework, no build step.
(() => {
  "use strict";

  const criteria = Array.from(document.querySelectorAll(".criterion"));
  const reviewForm = document.getElementById("review-form");
  const nextForm = document.getElementById("next-form");
  let current = -1;

  // Shortcuts are plain letters, so they must stay out of the way while the supervisor types.
  const isTyping = (element) =>
    element instanceof HTMLElement &&
    (element.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName));

  function marksOf(key) {
    return Array.from(document.querySelectorAll("mark[data-criteria]")).filter((mark) =>
      mark.dataset.criteria.split(" ").includes(key)
    );
  }

  function select(index) {
    if (!criteria.length) return;
    current = Math.max(0, Math.min(criteria.length - 1, index));
    const key = criteria[current].dataset.key;
    criteria.forEach((panel, position) => panel.classList.toggle("active", position === current));
    criteria[current].scrollIntoView({ block: "nearest" });
    document.querySelectorAll("mark.active").forEach((mark) => mark.classList.remove("active"));
    const marks = marksOf(key);
    marks.forEach((mark) => mark.classList.add("active"));
    if (marks.length) marks[0].scrollIntoView({ block: "center" });
  }

  function decide(decision) {
    // A disabled fieldset means another supervisor holds the call: nothing to submit.
    if (!reviewForm || reviewForm.querySelector("fieldset:disabled")) return;
    const choice = reviewForm.querySelector(`input[name="decision"][value="${decision}"]`);
    if (!choice) return;
    choice.checked = true;
    reviewForm.requestSubmit();
  }

  criteria.forEach((panel, index) => {
    panel.addEventListener("click", (event) => {
      if (!isTyping(event.target) && event.target.tagName !== "LABEL") select(index);
    });
  });

  // Clicking a highlighted quote selects the (first) criterion it is evidence for.
  document.querySelectorAll("mark[data-criteria]").forEach((mark) => {
    mark.addEventListener("click", () => {
      const key = mark.dataset.criteria.split(" ")[0];
      select(criteria.findIndex((panel) => panel.dataset.key === key));
    });
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    const actions = {
      j: () => select(current + 1),
      k: () => select(current - 1),
      a: () => decide("approve"),
      r: () => decide("reject"),
      n: () => nextForm && nextForm.requestSubmit(),
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });
})();
