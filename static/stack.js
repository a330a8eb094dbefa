// Tables marked stack-narrow become one card per row on a narrow screen (veredicto.css): each cell then
// shows its column's heading, which this copies from the table's header (issue 41: /me/ and the review queue
// scrolled sideways at 390 px).
"use strict";
for (const table of document.querySelectorAll("table.stack-narrow")) {
  const headings = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((cell, index) => {
      if (headings[index] && !cell.dataset.label) cell.dataset.label = headings[index];
    });
  }
}
