// The console's one script (served from this server; no inline script anywhere): bring the cited
// passage into view once the page picture has its size.
document.addEventListener("DOMContentLoaded", () => {
  const passage = document.getElementById("passage");
  if (!passage) return;
  const box = passage.querySelector(".highlight");
  (box || passage).scrollIntoView({ block: "center" });
});

// "Copy" buttons: the text of the element named by data-copy, to the clipboard.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  try {
    await navigator.clipboard.writeText(source.textContent);
    button.textContent = "Copied";
  } catch {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    button.textContent = "Selected: press Ctrl+C";
  }
});

// Files dropped on an upload form go into its file input and are sent at once; htmx reports the
// upload's progress, shown in the form's <progress>.
document.addEventListener("dragover", (event) => {
  const zone = event.target.closest && event.target.closest("form.drop");
  if (!zone) return;
  event.preventDefault();
  zone.classList.add("over");
});
document.addEventListener("dragleave", (event) => {
  const zone = event.target.closest && event.target.closest("form.drop");
  if (zone) zone.classList.remove("over");
});
document.addEventListener("drop", (event) => {
  const zone = event.target.closest && event.target.closest("form.drop");
  if (!zone) return;
  event.preventDefault();
  zone.classList.remove("over");
  const input = zone.querySelector("input[type=file]");
  input.files = event.dataTransfer.files;
  zone.requestSubmit();
});
document.addEventListener("htmx:xhr:progress", (event) => {
  const progress = event.target.querySelector && event.target.querySelector("progress");
  if (!progress || !event.detail.lengthComputable) return;
  progress.hidden = false;
  progress.value = Math.round((event.detail.loaded / event.detail.total) * 100);
  progress.textContent = `${progress.value} %`;
});
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.target;
  if (!form.matches || !form.matches("form.drop")) return;
  form.reset();
  const progress = form.querySelector("progress");
  if (progress) progress.hidden = true;
});
