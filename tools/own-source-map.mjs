// @ts-check
// The agents' bundles carry a source map of our own code only (tools/bundle.mjs).
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX = new Map([...B64].map((c, i) => [c, i]));

/** The numbers of one Base64 VLQ segment of a source map's `mappings`. */
function decodeSegment(text) {
  const out = [];
  let value = 0;
  let shift = 0;
  for (const c of text) {
    const digit = B64_INDEX.get(c);
    if (digit === undefined) throw new Error(`bundle: bad source map character "${c}"`);
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = shift = 0;
    }
  }
  return out;
}

function encodeNumber(n) {
  let v = n < 0 ? (-n << 1) | 1 : n << 1;
  let s = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v > 0) digit |= 32;
    s += B64[digit];
  } while (v > 0);
  return s;
}

/**
 * The source map of our own code only: every segment that maps into a third-party package
 * (node_modules) is dropped, and where such a run starts an unmapped segment (generated
 * column only) ends the preceding mapping, so a frame in client-node is shown at its bundle
 * position rather than at a wrong line of ours.
 *
 * Why (measured, docs/adr/0016-agent-memory.md): Node parses the whole map the first time it
 * formats a stack trace (any logged error) and keeps it for the life of the process as one
 * JavaScript array per segment. The full map of an agent has ~590,000 segments — 61 MiB of
 * heap, half of the agent's memory budget — while our own code is ~4 % of the bundle.
 */
export function ownCodeOnly(
  map,
  keep = (source) => !source.split(/[\\/]/).includes('node_modules'),
) {
  const sources = [];
  const sourceIndex = new Map();
  const names = [];
  const nameIndex = new Map();
  const indexOf = (list, index, value) => {
    let i = index.get(value);
    if (i === undefined) {
      i = list.push(value) - 1;
      index.set(value, i);
    }
    return i;
  };
  // Absolute state of the input, and the last values written (output fields are relative).
  let src = 0,
    line = 0,
    col = 0,
    name = 0;
  let oSrc = 0,
    oLine = 0,
    oCol = 0,
    oName = 0;
  // Whether the last segment written maps to a source: a mapping lasts until the next
  // segment, across lines too (Node looks entries up by line and column over the whole map).
  let mapped = false;
  const lines = map.mappings.split(';').map((text) => {
    let genCol = 0,
      oGenCol = 0;
    const out = [];
    for (const seg of text === '' ? [] : text.split(',')) {
      const f = decodeSegment(seg);
      genCol += f[0];
      if (f.length >= 4) {
        src += f[1];
        line += f[2];
        col += f[3];
      }
      if (f.length >= 5) name += f[4];
      const ours = f.length >= 4 && keep(map.sources[src]);
      if (!ours) {
        // One unmapped segment per run of third-party (or already unmapped) code.
        if (mapped) {
          out.push(encodeNumber(genCol - oGenCol));
          oGenCol = genCol;
          mapped = false;
        }
        continue;
      }
      const s = indexOf(sources, sourceIndex, map.sources[src]);
      let piece =
        encodeNumber(genCol - oGenCol) +
        encodeNumber(s - oSrc) +
        encodeNumber(line - oLine) +
        encodeNumber(col - oCol);
      oGenCol = genCol;
      oSrc = s;
      oLine = line;
      oCol = col;
      if (f.length >= 5) {
        const n = indexOf(names, nameIndex, map.names[name]);
        piece += encodeNumber(n - oName);
        oName = n;
      }
      out.push(piece);
      mapped = true;
    }
    return out.join(',');
  });
  return { ...map, sources, names, mappings: lines.join(';') };
}
