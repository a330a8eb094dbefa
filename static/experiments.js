// The experiment form's candidate versions follow the chosen rubric: only that rubric's group of versions
// can be picked (the server refuses a version the rubric lacks either way: experiments/forms.py).
"use strict";
(() => {
  const versions = document.querySelector("select[data-follows]");
  const rubric = versions && document.getElementById(versions.dataset.follows);
  if (!rubric) return;
  const follow = () => {
    const name = rubric.options[rubric.selectedIndex]?.text;
    for (const group of versions.querySelectorAll("optgroup")) {
      const mine = group.label === name;
      group.disabled = !mine;
      group.hidden = !mine;
    }
    if (versions.selectedOptions[0]?.parentElement?.disabled) {
      const first = versions.querySelector("optgroup:not([disabled]) option");
      if (first) first.selected = true;
    }
  };
  rubric.addEventListener("change", follow);
  follow();
})();
