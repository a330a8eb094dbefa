// The rubric's admin page: each criterion folds to one line (key, title, how many exceptions,
// how many lint findings) and opens with a click or Enter; opening one closes the others.
// Criteria with a form error, and new ones, start open. Without this script every criterion
// shows whole, as Django draws it.
// Loaded in the page's head (the admin's media): it waits for the form.
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  const findingsNode = document.getElementById("rubric-findings");
  const findings = findingsNode ? JSON.parse(findingsNode.textContent) : {};
  const group = document.getElementById("criteria-group");
  if (!group) return;
  const text = document.getElementById("criteria-texts").dataset;
  // The criteria's own forms, not their exceptions' (nested groups inside them).
  const forms = () =>
    Array.from(group.querySelectorAll(".djn-inline-form:not(.djn-empty-form)")).filter(
      (form) => form.closest(".djn-group") === group
    );

  function field(form, name) {
    const input = form.querySelector(`[name$="-${name}"]:not([name*="-exceptions-"])`);
    if (input) return input.value;
    // A published version is read-only: the value is the text in the field's box.
    const readonly =
      form.querySelector(`.fieldBox.field-${name} p`) || form.querySelector(`.form-row.field-${name} p`);
    return readonly ? readonly.textContent.trim() : "";
  }

  function exceptionsCount(form) {
    return Array.from(form.querySelectorAll(".djn-group-nested .djn-inline-form:not(.djn-empty-form)")).filter(
      (row) => !row.querySelector('input[name$="-DELETE"]:checked')
    ).length;
  }

  function summary(form) {
    const key = field(form, "key");
    const own = findings[key] || [];
    const exceptions = exceptionsCount(form);
    const parts = [
      (exceptions === 1 ? text.oneException : text.exceptions).replace("%s", exceptions),
    ];
    if (own.length) parts.push((own.length === 1 ? text.oneFinding : text.findings).replace("%s", own.length));
    return { key, title: field(form, "title"), parts, own };
  }

  function setOpen(form, open) {
    form.classList.toggle("criterion-closed", !open);
    form.querySelector(".criterion-toggle").setAttribute("aria-expanded", String(open));
  }

  function build(form) {
    if (form.querySelector(".criterion-toggle")) return;
    const info = summary(form);
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "criterion-toggle";
    const label = document.createElement("span");
    label.className = "criterion-line";
    const key = document.createElement("code");
    key.textContent = info.key || "—";
    const title = document.createElement("span");
    title.textContent = " " + info.title + " · " + info.parts.join(" · ");
    label.append(key, title);
    toggle.append(label);
    if (info.own.some((finding) => finding.severity === "error")) toggle.classList.add("has-error");
    else if (info.own.length) toggle.classList.add("has-warning");
    toggle.addEventListener("click", () => {
      const open = form.classList.contains("criterion-closed");
      forms().forEach((other) => other !== form && other.querySelector(".criterion-toggle") && setOpen(other, false));
      setOpen(form, open);
    });
    // The toggle takes the heading's label; the heading keeps its delete box.
    const heading = form.querySelector(":scope > h3");
    heading.querySelectorAll(":scope > b, :scope > .inline_label").forEach((node) => node.remove());
    heading.prepend(toggle);
    if (info.own.length) {
      const list = document.createElement("ul");
      list.className = "criterion-findings";
      for (const finding of info.own) {
        const item = document.createElement("li");
        item.className = "finding-" + finding.severity;
        const badge = document.createElement("strong");
        badge.textContent = finding.label + ": ";
        item.append(badge, finding.message);
        list.append(item);
      }
      heading.after(list);
    }
    const fresh = form.dataset.isInitial === "false";
    setOpen(form, fresh || Boolean(form.querySelector(".errorlist li")));
  }

  forms().forEach(build);
  // A criterion added with "Add another" gets its line too, and opens.
  new MutationObserver(() => forms().forEach(build)).observe(group, { childList: true, subtree: true });
});
