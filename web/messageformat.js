// A small reader of ICU MessageFormat, the subset the web client's
// catalogs use (web/locales/*.json, see i18n.js):
//
//   text                         as it is
//   {name}                       an argument (a number is written the
//                                locale's way, Intl.NumberFormat)
//   {name, number}               the same, said explicitly
//   {name, plural, =0 {…} one {…} other {…}}
//                                the locale's plural category of the
//                                number (Intl.PluralRules: Arabic has zero,
//                                one, two, few, many, other), an exact
//                                `=N` first; `#` inside is the number
//   {name, selectordinal, …}     the same with ordinal categories
//   {name, select, white {…} other {…}}
//                                a word's own branch, else `other`
//
// Unlike full ICU, an apostrophe is always literal (the catalogs write
// English's "don't" and French's "l'échiquier" as they are) and `{`, `}`
// cannot be escaped (no message needs them). A message that cannot be read
// is an error with its place, found by the catalogs' test before any
// browser sees it. Pure: no DOM, so Node's test runner reads it as it is.

export class MessageError extends Error {}

// The message's parts: strings, and nodes for arguments, plurals, selects
// and `#`.
export function parseMessage(text) {
  const source = String(text);
  let at = 0;
  const fail = (why) => {
    throw new MessageError(`${why} at ${at} in ${JSON.stringify(source)}`);
  };
  const skipSpace = () => {
    while (at < source.length && /\s/.test(source[at])) at += 1;
  };
  const word = () => {
    skipSpace();
    const start = at;
    while (at < source.length && /[\w=.-]/.test(source[at])) at += 1;
    if (at === start) fail('expected a name');
    return source.slice(start, at);
  };
  // Parts up to the closing brace of the enclosing branch (or the end).
  const parts = (inPlural, nested) => {
    const out = [];
    let text = '';
    while (at < source.length) {
      const ch = source[at];
      if (ch === '}') {
        if (!nested) fail('unexpected }');
        break;
      }
      if (ch === '#' && inPlural) {
        if (text) out.push(text);
        text = '';
        out.push({ type: 'pound' });
        at += 1;
        continue;
      }
      if (ch === '{') {
        if (text) out.push(text);
        text = '';
        at += 1;
        out.push(placeable(inPlural));
        continue;
      }
      text += ch;
      at += 1;
    }
    if (text) out.push(text);
    return out;
  };
  const placeable = (inPlural) => {
    const name = word();
    skipSpace();
    if (source[at] === '}') {
      at += 1;
      return { type: 'arg', name };
    }
    if (source[at] !== ',') fail('expected , or }');
    at += 1;
    const kind = word();
    skipSpace();
    if (kind === 'number' && source[at] === '}') {
      at += 1;
      return { type: 'arg', name };
    }
    if (!['plural', 'selectordinal', 'select'].includes(kind)) fail(`unknown kind ${kind}`);
    if (source[at] !== ',') fail('expected ,');
    at += 1;
    const options = {};
    for (;;) {
      skipSpace();
      if (source[at] === '}') {
        at += 1;
        break;
      }
      if (at >= source.length) fail('unclosed {');
      const key = word();
      skipSpace();
      if (source[at] !== '{') fail(`expected { after ${key}`);
      at += 1;
      options[key] = parts(kind !== 'select' || inPlural, true);
      if (source[at] !== '}') fail('unclosed branch');
      at += 1;
    }
    if (!options.other) fail(`${kind} without other`);
    return { type: kind, name, options };
  };
  const result = parts(false, false);
  if (at < source.length) fail('unexpected }');
  return result;
}

// The message written with `args` for `locale`.
export function formatMessage(parsed, args = {}, locale = 'en') {
  const numbers = new Intl.NumberFormat(locale);
  const write = (nodes, count) => nodes.map((node) => {
    if (typeof node === 'string') return node;
    if (node.type === 'pound') return count === undefined ? '#' : numbers.format(count);
    const value = args[node.name];
    if (node.type === 'arg') {
      if (typeof value === 'number') return numbers.format(value);
      return value === undefined || value === null ? `{${node.name}}` : String(value);
    }
    if (node.type === 'select') {
      const branch = Object.hasOwn(node.options, String(value)) ? node.options[String(value)] : node.options.other;
      return write(branch, count);
    }
    const number = Number(value);
    const exact = node.options[`=${number}`];
    if (exact) return write(exact, number);
    const rules = new Intl.PluralRules(locale, { type: node.type === 'selectordinal' ? 'ordinal' : 'cardinal' });
    const category = rules.select(number);
    return write(node.options[category] || node.options.other, number);
  }).join('');
  return write(parsed, undefined);
}

// The names of a message's arguments (a translation must use the same).
export function argumentNames(parsed) {
  const names = new Set();
  const walk = (nodes) => {
    for (const node of nodes) {
      if (typeof node === 'string' || node.type === 'pound') continue;
      names.add(node.name);
      if (node.options) Object.values(node.options).forEach(walk);
    }
  };
  walk(parsed);
  return names;
}
