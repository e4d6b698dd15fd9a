// Request form: renders the kernel's field specs, reports edits into `values`.
import { h } from "./shared.js";

const TEXT_DEBOUNCE_MS = 200;

function encode(value) { return JSON.stringify(value ?? null); }
function decode(text) { try { return JSON.parse(text); } catch { return text; } }

function render({ model, el, experimental }) {
  const uid = Math.random().toString(36).slice(2, 8);
  const title = h("div", { class: "mg-title" });
  const modeRow = h("div", { class: "mg-row" });
  const body = h("div", { class: "mg-form-fields" });
  const formIssue = h("div", { class: "mg-error", role: "alert" });
  const banner = h("div", { class: "mg-error", role: "alert" });
  const reset = h("button", { type: "button", class: "mg-button", onclick: () => model.send({ action: "reset" }) },
    "Start from example");
  el.append(h("div", { class: "mg-root mg-card mg-stack mg-form" },
    h("div", { class: "mg-row" }, title, reset), modeRow, body, formIssue, banner));

  const controls = new Map(); // name -> {key, wrap, input, issue, setValue}
  let timer = null;

  const setValue = (name, value, { debounce = false } = {}) => {
    const apply = () => {
      model.set("values", { ...model.get("values"), [name]: value });
      model.save_changes();
    };
    clearTimeout(timer);
    if (debounce) timer = setTimeout(apply, TEXT_DEBOUNCE_MS); else apply();
  };

  const referenceOptions = (spec) =>
    (model.get("references") || []).filter((r) => !spec.media || r.kind === spec.media);

  function buildControl(spec) {
    const id = `mg-${uid}-${spec.name}`;
    const issueId = `${id}-issue`;
    const common = { id, name: spec.name, "aria-describedby": issueId, title: spec.help || undefined,
      "aria-required": spec.required ? "true" : undefined };
    let input; let read; let write;
    switch (spec.control) {
      case "select": {
        input = h("select", common,
          spec.required ? null : h("option", { value: encode(null) }, "—"),
          ...spec.options.map((o) => h("option", { value: encode(o.value) }, o.label)));
        read = () => decode(input.value);
        write = (v) => { input.value = encode(v); };
        input.addEventListener("change", () => setValue(spec.name, read()));
        break;
      }
      case "number": {
        input = h("input", { ...common, type: "number", class: "mg-input", min: spec.minimum ?? undefined,
          max: spec.maximum ?? undefined, step: spec.step ?? "any" });
        read = () => (input.value === "" ? null : Number(input.value));
        write = (v) => { input.value = v ?? ""; };
        input.addEventListener("input", () => setValue(spec.name, read(), { debounce: true }));
        break;
      }
      case "toggle": {
        input = h("input", { ...common, type: "checkbox", role: "switch" });
        read = () => input.checked;
        write = (v) => { input.checked = Boolean(v); };
        input.addEventListener("change", () => setValue(spec.name, read()));
        break;
      }
      case "reference": {
        const picker = h("select", { ...common, multiple: spec.multiple || undefined, size: spec.multiple ? 3 : undefined });
        const file = h("input", { type: "file", class: "mg-visually-hidden", id: `${id}-file`,
          accept: spec.media ? `${spec.media}/*` : undefined });
        const uploadButton = h("button", { type: "button", class: "mg-button", "aria-controls": id,
          onclick: () => file.click() }, "Upload…");
        const fill = () => {
          const refs = referenceOptions(spec);
          picker.replaceChildren(
            spec.multiple ? null : h("option", { value: "" }, refs.length ? "— none —" : "— none (upload or use an output) —"),
            ...refs.map((r) => h("option", { value: r.asset_id }, r.label)));
        };
        fill();
        read = () => (spec.multiple ? [...picker.selectedOptions].map((o) => o.value) : picker.value || null);
        write = (v) => {
          fill();
          const chosen = new Set(Array.isArray(v) ? v : v ? [v] : []);
          // a value that is no offered reference (an example's sample asset, a pasted id)
          // still shows as itself instead of looking empty
          const offered = new Set([...picker.options].map((o) => o.value));
          for (const id of chosen) if (!offered.has(id)) picker.append(h("option", { value: id }, id));
          for (const option of picker.options) option.selected = chosen.has(option.value);
        };
        picker.addEventListener("change", () => setValue(spec.name, read()));
        file.addEventListener("change", async () => {
          const chosen = file.files && file.files[0];
          if (!chosen) return;
          const data = await chosen.arrayBuffer();
          await experimental.invoke("upload", { field: spec.name, name: chosen.name, type: chosen.type },
            { buffers: [data], signal: AbortSignal.timeout(600000) });
          file.value = "";
        });
        input = picker;
        const wrapControl = h("div", { class: "mg-row" }, picker, uploadButton, file);
        return { input, read, write, node: wrapControl, refill: fill };
      }
      case "textarea":
      case "json": {
        input = h("textarea", { ...common, rows: spec.control === "json" ? 4 : 3, maxlength: spec.max_length ?? undefined,
          spellcheck: spec.control === "json" ? "false" : undefined });
        read = () => input.value;
        write = (v) => { input.value = v == null ? "" : typeof v === "string" ? v : JSON.stringify(v, null, 1); };
        input.addEventListener("input", () => setValue(spec.name, read(), { debounce: true }));
        break;
      }
      default: { // text, list
        input = h("input", { ...common, type: "text", class: "mg-input", maxlength: spec.max_length ?? undefined,
          placeholder: spec.control === "list" ? "comma, separated, values" : undefined });
        read = () => input.value;
        write = (v) => { input.value = v == null ? "" : Array.isArray(v) ? v.join(", ") : String(v); };
        input.addEventListener("input", () => setValue(spec.name, read(), { debounce: true }));
      }
    }
    return { input, read, write, node: input };
  }

  function renderFields() {
    const specs = model.get("fields") || [];
    const seen = new Set();
    const nodes = [];
    for (const spec of specs) {
      seen.add(spec.name);
      const key = JSON.stringify(spec);
      let entry = controls.get(spec.name);
      if (!entry || entry.key !== key) {
        const built = buildControl(spec);
        const issue = h("div", { class: "mg-field-issue", id: `mg-${uid}-${spec.name}-issue`, "aria-live": "polite" });
        const label = h("label", { for: built.input.id, class: "mg-field-label" }, spec.label,
          spec.required ? h("span", { class: "mg-required", "aria-hidden": "true" }, " *") : null);
        const wrap = h("div", { class: "mg-field", dataset: { field: spec.name, control: spec.control } },
          label, built.node, issue);
        entry = { key, wrap, issue, ...built };
        controls.set(spec.name, entry);
        entry.write(model.get("values")[spec.name]);
      }
      nodes.push(entry.wrap);
    }
    for (const name of [...controls.keys()]) if (!seen.has(name)) controls.delete(name);
    body.replaceChildren(...nodes);
    renderIssues();
  }

  function renderValues() {
    const values = model.get("values") || {};
    for (const [name, entry] of controls) {
      if (document.activeElement === entry.input) continue; // never fight the user's typing
      entry.write(values[name]);
    }
  }

  function renderReferences() {
    const values = model.get("values") || {};
    for (const [name, entry] of controls) if (entry.refill) entry.write(values[name]);
  }

  function renderIssues() {
    const issues = model.get("issues") || {};
    for (const [name, entry] of controls) {
      const message = issues[name] || "";
      entry.issue.textContent = message;
      entry.input.setAttribute("aria-invalid", message ? "true" : "false");
    }
    formIssue.textContent = issues._form || "";
    const uploading = model.get("uploading");
    if (uploading && controls.get(uploading)) controls.get(uploading).issue.textContent = "Uploading…";
  }

  function renderHeader() {
    title.textContent = model.get("model_name") ? `Request · ${model.get("model_name")}` : "Request (choose a model)";
    const modes = model.get("modes") || [];
    modeRow.replaceChildren();
    if (modes.length > 1) {
      const select = h("select", { id: `mg-${uid}-mode`, "aria-label": "Mode" },
        ...modes.map((m) => h("option", { value: m.id }, m.name)));
      select.value = model.get("mode");
      select.addEventListener("change", () => { model.set("mode", select.value); model.save_changes(); });
      modeRow.append(h("label", { for: select.id, class: "mg-field-label" }, "Mode"), select);
    }
  }

  const renderError = () => { banner.textContent = model.get("error") || ""; };
  const handlers = [
    ["change:fields", renderFields], ["change:values", renderValues], ["change:issues change:uploading", renderIssues],
    ["change:references", renderReferences], ["change:modes change:mode change:model_name", renderHeader],
    ["change:error", renderError],
  ];
  renderHeader(); renderFields(); renderError();
  for (const [event, fn] of handlers) model.on(event, fn);
  return () => { clearTimeout(timer); for (const [event, fn] of handlers) model.off(event, fn); };
}

export default { render };
