// The call's quality score, live on the review page while the supervisor scores. The same arithmetic
// as rubrics/quality.py's quality_score, term by term (a browser test holds them to the same inputs):
// shares of each scale, weighted within sections, sections weighted, N/A excluded or met, an auto-fail
// zeroing or flagging the call, and no score while a criterion has no value.
"use strict";

const NOT_APPLICABLE = "na";

function veredictoQuality(policy, values) {
  const totals = {};
  for (const section of policy.sections) totals[section.key] = [0, 0];
  const failed = [], missing = [];
  for (const criterion of policy.criteria) {
    const value = values[criterion.key];
    if (value === undefined || value === null || value === "") { missing.push(criterion.key); continue; }
    let part;
    if (value === NOT_APPLICABLE) {
      if (policy.not_applicable !== "met") continue;
      part = 100;
    } else {
      const number = Number(value);
      part = (100 * (number - criterion.scale_min)) / (criterion.scale_max - criterion.scale_min);
      if (criterion.critical && criterion.fail_at !== null && number <= criterion.fail_at) failed.push(criterion.key);
    }
    const total = totals[criterion.section] || (totals[criterion.section] = [0, 0]);
    total[0] += criterion.weight * part;
    total[1] += criterion.weight;
  }
  let score;
  if (failed.length && policy.auto_fail === "zero") score = 0;
  else if (missing.length) score = null;
  else {
    let weighted = 0, weights = 0;
    for (const section of policy.sections) {
      const [shares, weight] = totals[section.key] || [0, 0];
      if (weight > 0) { weighted += (section.weight * shares) / weight; weights += section.weight; }
    }
    score = weights > 0 ? weighted / weights : null;
  }
  return { score, auto_failed: failed.length > 0, auto_fail_criteria: failed, missing };
}

(() => {
  const box = document.getElementById("quality-score");
  const data = document.getElementById("quality-policy");
  if (!box || !data) return;
  const { policy, titles } = JSON.parse(data.textContent);
  const form = document.getElementById("review-form");
  const shown = box.querySelector(".quality-value");
  const failure = box.querySelector(".quality-auto-fail");
  const failing = box.querySelector(".quality-criteria");
  const waiting = box.querySelector(".quality-waiting");
  const chosen = () => {
    const values = {};
    for (const criterion of policy.criteria) {
      const checked = form.querySelector(`input[name="criterion-${criterion.key}-value"]:checked`);
      if (checked) values[criterion.key] = checked.value === NOT_APPLICABLE ? NOT_APPLICABLE : Number(checked.value);
    }
    return values;
  };
  const render = () => {
    const result = veredictoQuality(policy, chosen());
    shown.textContent = result.score === null ? "—" : result.score.toFixed(1);
    box.dataset.score = result.score === null ? "" : String(result.score);
    failure.hidden = !result.auto_failed;
    failing.textContent = result.auto_fail_criteria.map((key) => titles[key] || key).join(", ");
    waiting.hidden = result.score !== null || result.auto_failed;
    box.classList.toggle("failed", result.auto_failed);
  };
  form.addEventListener("change", render);
  render();
})();
