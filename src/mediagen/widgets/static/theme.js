// Theme probe: tells the kernel whether the page around it is dark, and keeps telling it.
// JupyterLab and Notebook 7 mark the theme on <body data-jp-theme-light>; VS Code marks
// body.vscode-dark; anywhere else the browser's colour-scheme preference decides.
// It also brings the shared stylesheet for widgets beside it that only use its classes.
import { ensureSharedStyles, styled } from "./shared.js";
function isDark() {
  const body = document.body;
  if (body.dataset.jpThemeLight !== undefined) return body.dataset.jpThemeLight === "false";
  if (body.classList.contains("vscode-dark") || body.classList.contains("vscode-high-contrast")) return true;
  if (body.classList.contains("vscode-light")) return false;
  return Boolean(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
}

function render({ model, el }) {
  ensureSharedStyles();
  el.classList.add("mg-theme-probe");
  const report = () => {
    const dark = isDark();
    if (model.get("dark") !== dark) { model.set("dark", dark); model.save_changes(); }
  };
  report();
  const observer = new MutationObserver(report);
  observer.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
  return () => observer.disconnect();
}

export default styled({ render });
