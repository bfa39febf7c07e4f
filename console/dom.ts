/**
 * The console's whole UI library: `h` makes an element. Text is always a text node (never HTML),
 * so nothing an order or an error message carries can become markup.
 */

export type Child = Node | string | number | null | undefined | false | Child[];
export type Props = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

const append = (parent: Node, child: Child) => {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) for (const c of child) append(parent, c);
  else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
};

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
};

/** A form of one field: its `label`, the `input`, a submit button saying `button`, and what follows (a hint). */
export const fieldForm = (props: Props, label: string, input: HTMLInputElement, button: string, ...after: Child[]) =>
  h(
    'form',
    props,
    h('label', { for: input.id }, label),
    ' ',
    input,
    ' ',
    h('button', { type: 'submit' }, button),
    after,
  );

/** Replaces what `parent` shows. */
export const show = (parent: Element, ...children: Child[]) => {
  parent.replaceChildren();
  append(parent, children);
};

/** `3 min`, `2 h`, `4 d`: how long ago an ISO time was. */
export const age = (iso: string, now = Date.now()) => {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
};

/** A time as the operator reads it: UTC, to the second. */
export const time = (iso: string | null | undefined) =>
  iso ? h('time', { datetime: iso }, `${iso.slice(0, 19).replace('T', ' ')} UTC`) : '—';
