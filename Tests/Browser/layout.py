"""What the page looks like to a finger, measured in the browser: elements that overlap, a page
wider than the screen, touch targets smaller than 44 × 44 px — and taps made of real touch
events (CDP Input.dispatchTouchEvent), an on-screen keyboard's smaller viewport, and the
system's light or dark setting."""

from browser import DEVICE_PIXEL_RATIO, Browser

MIN_TARGET = 44  # px, width and height (WCAG 2.5.5, Apple's and Google's guidelines)

# The part of `element` a person can see: its box clipped by the viewport and by every ancestor
# that clips (overflow other than visible), or null. Hidden, transparent and visually hidden
# elements (screen-reader-only labels, the file input behind its label) count as not seen.
_VISIBLE_BOX = """
const seenBox = (element) => {
  if (element.closest('.visually-hidden, [hidden], #boot')) return null;
  const style = getComputedStyle(element);
  if (style.visibility !== 'visible' || Number(style.opacity) === 0) return null;
  const r = element.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return null;
  let box = { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  const clip = (c) => {
    box = { left: Math.max(box.left, c.left), top: Math.max(box.top, c.top),
            right: Math.min(box.right, c.right), bottom: Math.min(box.bottom, c.bottom) };
  };
  clip({ left: 0, top: 0, right: innerWidth, bottom: innerHeight });
  for (let a = element.parentElement; a && a !== document.body; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX !== 'visible' || s.overflowY !== 'visible') clip(a.getBoundingClientRect());
  }
  return box.right - box.left >= 1 && box.bottom - box.top >= 1 ? box : null;
};
const describe = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
  + (e.dataset.testid ? `[data-testid=${e.dataset.testid}]` : '')
  + (!e.id && typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
const INTERACTIVE = 'button, input:not([type=hidden]), select, textarea, a[href], [contenteditable=true], label.icon-button, '
  + '[role=button], [role=tab]';
"""


def overlaps(b: Browser, root: str = "body") -> list[str]:
    """Pairs of seen elements under `root` whose boxes overlap (by more than 1 px each way): every
    control, and every element holding text of its own. An element and its own descendants are
    not a pair."""
    return b.js(_VISIBLE_BOX + """
        const root = document.querySelector(arguments[0]);
        const ownText = (e) => [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
        const seen = [...root.querySelectorAll('*')]
          .filter((e) => !(e instanceof SVGElement) && (e.matches(INTERACTIVE) || ownText(e)))
          .map((e) => ({ e, box: seenBox(e) }))
          .filter((x) => x.box);
        const found = [];
        for (let i = 0; i < seen.length; i++) {
          for (let j = i + 1; j < seen.length; j++) {
            const a = seen[i], c = seen[j];
            if (a.e.contains(c.e) || c.e.contains(a.e)) continue;
            const w = Math.min(a.box.right, c.box.right) - Math.max(a.box.left, c.box.left);
            const h = Math.min(a.box.bottom, c.box.bottom) - Math.max(a.box.top, c.box.top);
            if (w > 1 && h > 1) found.push(`${describe(a.e)} and ${describe(c.e)} (${Math.round(w)}×${Math.round(h)} px)`);
          }
        }
        return found;
    """, root)


def horizontal_overflow(b: Browser) -> list[str]:
    """What scrolls sideways: the page, or a vertically scrolling area wider than itself. The
    formatting bar is the one row meant to scroll sideways (its buttons in a line, as on a phone's
    keyboard bar) and is not counted."""
    return b.js("""
        const found = [];
        const page = document.scrollingElement;
        if (page.scrollWidth > innerWidth + 1) found.push(`the page (${page.scrollWidth} px in a ${innerWidth} px viewport)`);
        for (const e of document.querySelectorAll('body *')) {
          if (e.closest('[data-testid=format-bar]') || !e.getClientRects().length) continue;
          const s = getComputedStyle(e);
          if (!['auto', 'scroll'].includes(s.overflowX)) continue;
          if (e.scrollWidth > e.clientWidth + 1) found.push(`${e.id || e.className}: ${e.scrollWidth} px in ${e.clientWidth} px`);
        }
        return found;
    """)


def small_targets(b: Browser) -> list[str]:
    """Seen controls smaller than 44 × 44 px. Links inside a note's text are text, not targets
    (as WCAG counts them); a check box's target is the label around it, which a tap ticks too."""
    return b.js(_VISIBLE_BOX + """
        const target = (e) => (e.matches('input[type=checkbox], input[type=radio]') && e.closest('label')) || e;
        return [...document.querySelectorAll(INTERACTIVE)]
          .filter((e) => seenBox(e) && !e.closest('.rich-editor a'))
          .map((e) => [e, target(e).getBoundingClientRect()])
          .filter(([, r]) => Math.round(r.width) < arguments[0] || Math.round(r.height) < arguments[0])
          .map(([e, r]) => `${describe(e)} ${Math.round(r.width)}×${Math.round(r.height)}`);
    """, MIN_TARGET)


def tap(b: Browser, css: str):
    """Taps the center of the first shown `css` with a finger: touchStart and touchEnd through
    CDP (what a touch screen sends; the page gets touch, pointer and then click events). The
    element must be what is under the finger."""
    element = b.wait_visible(css)
    b.js("arguments[0].scrollIntoView({block: 'nearest', inline: 'nearest'})", element)
    x, y, hit = b.js("""
        const r = arguments[0].getBoundingClientRect();
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        const under = document.elementFromPoint(x, y);
        return [x, y, Boolean(under && (under === arguments[0] || arguments[0].contains(under)))];
    """, element)
    assert hit, f"{b.name}: something covers {css} where a finger would tap it"
    b.driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    b.driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def set_viewport_height(b: Browser, height: int):
    """The viewport as an on-screen keyboard leaves it: as tall as `height`, as wide as the device."""
    b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": b.device[0], "height": height, "deviceScaleFactor": DEVICE_PIXEL_RATIO, "mobile": True})
    b.wait(lambda d: b.js("return innerHeight") == height, f"the viewport to be {height} px tall")


def set_safe_area(b: Browser, top: int = 0, right: int = 0, bottom: int = 0, left: int = 0):
    """A notch, rounded corners and a home bar: the insets env(safe-area-inset-*) gives the page."""
    b.driver.execute_cdp_cmd("Emulation.setSafeAreaInsetsOverride", {"insets": {"top": top, "right": right, "bottom": bottom, "left": left}})


def set_device_metrics(b: Browser, width: int, height: int):
    """The screen turned (or another size): `width` × `height` CSS pixels."""
    b.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": DEVICE_PIXEL_RATIO, "mobile": True})
    b.wait(lambda d: b.js("return [innerWidth, innerHeight]") == [width, height], f"a {width} × {height} viewport")


def outside(b: Browser, top: float, right: float, bottom: float, left: float) -> list[str]:
    """Seen controls and texts reaching into the margins `top`, `right`, `bottom`, `left` (px) of the viewport."""
    return b.js(_VISIBLE_BOX + """
        const [top, right, bottom, left] = arguments;
        const ownText = (e) => [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
        return [...document.body.querySelectorAll('*')]
          .filter((e) => !(e instanceof SVGElement) && (e.matches(INTERACTIVE) || ownText(e)))
          .map((e) => [e, seenBox(e)])
          .filter(([, box]) => box && (box.top < top - 0.5 || box.left < left - 0.5
                                       || box.right > innerWidth - right + 0.5 || box.bottom > innerHeight - bottom + 0.5))
          .map(([e, box]) => `${describe(e)} at ${Math.round(box.left)},${Math.round(box.top)}–${Math.round(box.right)},${Math.round(box.bottom)}`);
    """, top, right, bottom, left)


def set_color_scheme(b: Browser, scheme: str):
    """The system's light or dark setting, as the page's prefers-color-scheme sees it."""
    b.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    b.wait(lambda d: b.js(f"return matchMedia('(prefers-color-scheme: {scheme})').matches"), f"the {scheme} scheme")
    # Colours ease into the new scheme (CSS transitions): measured halfway they would be neither.
    b.wait(lambda d: b.js("return document.getAnimations().every((a) => !(a instanceof CSSTransition) || a.playState !== 'running')"),
           "the colours to settle")


def background(b: Browser, css: str) -> str:
    return b.js("return getComputedStyle(document.querySelector(arguments[0])).backgroundColor", css)
