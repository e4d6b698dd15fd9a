// Request form: renders the kernel's field specs and sends the user's edits (the kernel owns `values`).
import {
  advancedReasons,
  alternativePrefix,
  decode,
  encode,
  fieldHelp,
  fieldIssue,
  layoutFields,
  readNumber,
  referenceOptions,
  selectChanges,
  selectValue,
  textValue,
  type Choice,
  type FieldSpec,
  type Issues,
  type Json,
  type Values
} from '../formRules';
import { announceEdit, newEditId } from '../choicePrices';
import type { RenderProps } from '../model';
import { h, listen, styled } from '../shared';

const TEXT_DEBOUNCE_MS = 200;

/** A field's control: its focusable input, how to read and write its value, and (for a
 * reference) how to refill its choices. */
interface Control {
  input: HTMLElement;
  node: HTMLElement;
  read: () => Json;
  write: (value: Json | undefined, values?: Values) => void;
  refill?: () => void;
}

/** A field on the form: its control, the box around it, and the spec it was built from. */
interface Entry extends Control {
  key: string;
  wrap: HTMLElement;
  issue: HTMLElement;
  spec: FieldSpec;
}

function render({ model, el, experimental }: RenderProps) {
  const uid = Math.random().toString(36).slice(2, 8);
  const title = h('div', { class: 'mg-title' });
  const modeRow = h('div', { class: 'mg-row' });
  const body = h('div', { class: 'mg-form-fields' });
  const formIssue = h('div', { class: 'mg-error', role: 'alert' });
  const banner = h('div', { class: 'mg-error', role: 'alert' });
  const reset = h(
    'button',
    {
      type: 'button',
      class: 'mg-button mg-form-reset',
      onclick: () => model.send({ action: 'reset' })
    },
    'Start from example'
  );
  const advancedBody = h('div', { class: 'mg-form-fields' });
  const advancedSummary = h('summary', { class: 'mg-form-advanced-summary' }, 'Advanced');
  const advanced = h('details', { class: 'mg-form-advanced' }, advancedSummary, advancedBody);
  el.append(
    h(
      'div',
      { class: 'mg-root mg-card mg-stack mg-form' },
      h('div', { class: 'mg-row' }, title, reset),
      modeRow,
      body,
      advanced,
      formIssue,
      banner
    )
  );

  const controls = new Map<string, Entry>();
  // Edits not yet sent, by field: typing waits for a pause, but any other edit (or leaving the
  // field) sends every field's latest value at once, so no keystroke is dropped by another.
  const pending: Values = {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!Object.keys(pending).length) return;
    // only the edited fields: the kernel may have changed others meanwhile (a reference)
    const id = newEditId();
    model.send({ action: 'edit', values: { ...pending }, id });
    // the estimate shows a priced choice's price now, before the kernel answers
    announceEdit({ token: model.get('token') || '', id, changes: { ...pending } });
    for (const name of Object.keys(pending)) delete pending[name];
  };
  const setValues = (changes: Values, { debounce = false } = {}) => {
    Object.assign(pending, changes);
    if (!debounce) {
      flush();
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(flush, TEXT_DEBOUNCE_MS);
  };
  const setValue = (name: string, value: Json, options?: { debounce?: boolean }) =>
    setValues({ [name]: value }, options);
  const typed = (input: HTMLElement, name: string, read: () => Json) => {
    input.addEventListener('input', () => setValue(name, read(), { debounce: true }));
    input.addEventListener('change', flush); // leaving the field sends it now
  };

  const references = (spec: FieldSpec) => referenceOptions(model.get('references') || [], spec);

  function buildControl(spec: FieldSpec): Control {
    const id = `mg-${uid}-${spec.name}`;
    const issueId = `${id}-issue`;
    const helpId = `${id}-help`;
    const common = {
      id,
      name: spec.name,
      'aria-describedby': spec.help ? `${helpId} ${issueId}` : issueId,
      'aria-required': spec.required ? 'true' : undefined
    };
    let input: HTMLElement;
    let read: Control['read'];
    let write: Control['write'];
    switch (spec.control) {
      case 'select': {
        const options = (list: Choice[] = [], prefix = '') =>
          list.map(o => h('option', { value: prefix + encode(o.value) }, o.label));
        const alt = spec.alternative;
        const select = h(
          'select',
          common,
          spec.required ? null : h('option', { value: encode(null) }, '—'),
          ...(alt
            ? [
                h('optgroup', { label: spec.label }, ...options(spec.options)),
                h(
                  'optgroup',
                  { label: alt.label },
                  ...options(alt.options, alternativePrefix(spec) ?? '')
                )
              ]
            : options(spec.options))
        );
        input = select;
        read = () => decode(select.value);
        write = (v, values) => {
          select.value = selectValue(spec, v, values);
        };
        select.addEventListener('change', () => setValues(selectChanges(spec, select.value)));
        break;
      }
      case 'number': {
        const box = h('input', {
          ...common,
          type: 'number',
          class: 'mg-input',
          min: spec.minimum ?? undefined,
          max: spec.maximum ?? undefined,
          step: spec.step ?? 'any'
        });
        input = box;
        read = () => readNumber(box.value);
        write = v => {
          box.value = v === null || v === undefined ? '' : String(v);
        };
        typed(input, spec.name, read);
        break;
      }
      case 'toggle': {
        const toggle = h('input', { ...common, type: 'checkbox', role: 'switch' });
        input = toggle;
        read = () => toggle.checked;
        write = v => {
          toggle.checked = Boolean(v);
        };
        input.addEventListener('change', () => setValue(spec.name, read()));
        break;
      }
      case 'reference': {
        const picker = h('select', {
          ...common,
          multiple: spec.multiple || undefined,
          size: spec.multiple ? 3 : undefined
        });
        // opened by the Upload button (the one Tab stop); labelled for assistive technology
        const file = h('input', {
          type: 'file',
          class: 'mg-visually-hidden',
          id: `${id}-file`,
          tabindex: -1,
          'aria-label': `File for ${spec.label}`,
          accept: spec.media ? `${spec.media}/*` : undefined
        });
        const uploadButton = h(
          'button',
          { type: 'button', class: 'mg-button', 'aria-controls': id, onclick: () => file.click() },
          'Upload…'
        );
        const fill = () => {
          const refs = references(spec);
          picker.replaceChildren(
            ...(spec.multiple
              ? []
              : [
                  h(
                    'option',
                    { value: '' },
                    refs.length ? '— none —' : '— none (upload or use an output) —'
                  )
                ]),
            ...refs.map(r => h('option', { value: r.asset_id }, r.label))
          );
        };
        fill();
        read = () =>
          spec.multiple ? [...picker.selectedOptions].map(o => o.value) : picker.value || null;
        write = v => {
          fill();
          const chosen = new Set((Array.isArray(v) ? v : v ? [v] : []).map(String));
          // a value that is no offered reference (an example's sample asset, a pasted id)
          // still shows as itself instead of looking empty
          const offered = new Set([...picker.options].map(o => o.value));
          for (const id of chosen)
            if (!offered.has(id)) picker.append(h('option', { value: id }, id));
          for (const option of picker.options) option.selected = chosen.has(option.value);
        };
        picker.addEventListener('change', () => setValue(spec.name, read()));
        file.addEventListener('change', async () => {
          const chosen = file.files && file.files[0];
          if (!chosen) return;
          const data = await chosen.arrayBuffer();
          await experimental.invoke(
            'upload',
            { field: spec.name, name: chosen.name, type: chosen.type },
            { buffers: [data], signal: AbortSignal.timeout(600000) }
          );
          file.value = '';
        });
        input = picker;
        const wrapControl = h('div', { class: 'mg-row' }, picker, uploadButton, file);
        return { input, read, write, node: wrapControl, refill: fill };
      }
      case 'textarea':
      case 'json': {
        const area = h('textarea', {
          ...common,
          rows: spec.control === 'json' ? 4 : 3,
          maxlength: spec.max_length ?? undefined,
          spellcheck: spec.control === 'json' ? 'false' : undefined
        });
        input = area;
        read = () => area.value;
        write = v => {
          area.value = textValue(spec.control, v);
        };
        typed(input, spec.name, read);
        break;
      }
      default: {
        // text, list
        const box = h('input', {
          ...common,
          type: 'text',
          class: 'mg-input',
          maxlength: spec.max_length ?? undefined,
          placeholder: spec.control === 'list' ? 'comma, separated, values' : undefined
        });
        input = box;
        read = () => box.value;
        write = v => {
          box.value = textValue(spec.control, v);
        };
        typed(input, spec.name, read);
      }
    }
    return { input, read, write, node: input };
  }

  function renderFields() {
    const specs: FieldSpec[] = model.get('fields') || [];
    const values: Values = model.get('values') || {};
    // a control rebuilt under the user's focus (its choices changed) gets the focus back
    const focused = [...controls].find(([, e]) => e.wrap.contains(document.activeElement))?.[0];
    const seen = new Set<string>();
    // a field merged into another shows inside that one's control
    const layout = layoutFields(specs);
    const place = (spec: FieldSpec): HTMLElement => {
      seen.add(spec.name);
      const key = JSON.stringify(spec);
      let entry = controls.get(spec.name);
      if (!entry || entry.key !== key) {
        const built = buildControl(spec);
        const issue = h('div', {
          class: 'mg-field-issue',
          id: `mg-${uid}-${spec.name}-issue`,
          'aria-live': 'polite'
        });
        const help = fieldHelp(spec);
        const label = h(
          'label',
          { for: built.input.id, class: 'mg-field-label' },
          spec.label,
          spec.required ? h('span', { class: 'mg-required', 'aria-hidden': 'true' }, ' *') : null
        );
        const wrap = h(
          'div',
          { class: 'mg-field', dataset: { field: spec.name, control: spec.control } },
          label,
          h(
            'div',
            { class: 'mg-field-control' },
            built.node,
            help ? h('div', { class: 'mg-field-help', id: `${built.input.id}-help` }, help) : null,
            issue
          )
        );
        entry = { key, wrap, issue, spec, ...built };
        controls.set(spec.name, entry);
        entry.write(spec.name in pending ? pending[spec.name] : values[spec.name], values); // unsent text stays
      }
      return entry.wrap;
    };
    const main = layout.main.map(place);
    const more = layout.more.map(place);
    for (const name of [...controls.keys()]) if (!seen.has(name)) controls.delete(name);
    body.replaceChildren(...main);
    advancedBody.replaceChildren(...more);
    advanced.hidden = !more.length;
    advancedSummary.textContent = `Advanced (${more.length} more)`;
    const refocus = focused && controls.get(focused);
    if (refocus && !refocus.wrap.contains(document.activeElement)) refocus.input.focus();
    renderIssues();
  }

  function renderValues() {
    const values = model.get('values') || {};
    for (const [name, entry] of controls) {
      if (document.activeElement === entry.input || name in pending) continue; // never fight the user's typing
      entry.write(values[name], values);
    }
  }

  function renderReferences() {
    const values = model.get('values') || {};
    for (const [name, entry] of controls) if (entry.refill) entry.write(values[name], values);
    openAdvancedIfNeeded();
  }

  // Advanced opens by itself when something in it needs the user: an issue or a reference put there.
  // Only a new reason opens it: a user who closed it again is not overruled on every keystroke.
  let openedFor = '';
  function openAdvancedIfNeeded() {
    const specs = [...controls.values()].map(entry => entry.spec);
    const key = advancedReasons(specs, model.get('values') || {}, model.get('issues') || {});
    if (key && key !== openedFor) advanced.open = true;
    openedFor = key;
  }

  function renderIssues() {
    const issues: Issues = model.get('issues') || {};
    for (const entry of controls.values()) {
      const message = fieldIssue(entry.spec, issues);
      entry.issue.textContent = message;
      entry.input.setAttribute('aria-invalid', message ? 'true' : 'false');
    }
    formIssue.textContent = issues._form || '';
    const uploading = model.get('uploading');
    const busy = uploading ? controls.get(uploading) : undefined;
    if (busy) busy.issue.textContent = 'Uploading…';
    openAdvancedIfNeeded();
  }

  function renderHeader() {
    reset.disabled = !model.get('model_name');
    title.textContent = model.get('model_name')
      ? `Request · ${model.get('model_name')}`
      : 'Request (choose a model)';
    const modes = model.get('modes') || [];
    modeRow.replaceChildren();
    if (modes.length > 1) {
      const select = h(
        'select',
        { id: `mg-${uid}-mode`, 'aria-label': 'Mode' },
        ...modes.map(m => h('option', { value: m.id }, m.name))
      );
      select.value = model.get('mode');
      select.addEventListener('change', () => {
        model.set('mode', select.value);
        model.save_changes();
      });
      modeRow.append(h('label', { for: select.id, class: 'mg-field-label' }, 'Mode'), select);
    }
  }

  const renderError = () => {
    banner.textContent = model.get('error') || '';
  };
  renderHeader();
  renderFields();
  renderError();
  const unlisten = listen(model, {
    'change:fields': renderFields,
    'change:values': renderValues,
    'change:issues change:uploading': renderIssues,
    'change:references': renderReferences,
    'change:modes change:mode change:model_name': renderHeader,
    'change:error': renderError
  });
  return () => {
    flush();
    unlisten();
  };
}

export default styled({ render });
