/**
 * A fixed-row-height virtualised list: only the rows in view (plus overscan) exist in the DOM, so 10,000+
 * rows scroll smoothly. The window arithmetic (`visibleRange`) is pure and unit-tested.
 */
import { visibleRange } from './timeline-model.ts';

export interface VirtualListOptions<T> {
  container: HTMLElement;
  rowHeight: number;
  renderRow(item: T, index: number): HTMLElement;
}

export class VirtualList<T> {
  private items: T[] = [];
  private readonly spacer: HTMLElement;
  private readonly layer: HTMLElement;
  private readonly opts: VirtualListOptions<T>;
  private frame = 0;
  private lastKey = '';

  constructor(opts: VirtualListOptions<T>) {
    this.opts = opts;
    const c = opts.container;
    c.style.overflowY = 'auto';
    c.style.position = 'relative';
    this.spacer = document.createElement('div');
    this.layer = document.createElement('div');
    this.layer.style.position = 'absolute';
    this.layer.style.left = '0';
    this.layer.style.right = '0';
    this.layer.style.top = '0';
    c.replaceChildren(this.spacer, this.layer);
    c.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(c);
  }

  setItems(items: T[], keepScroll = true): void {
    this.items = items;
    this.spacer.style.height = `${items.length * this.opts.rowHeight}px`;
    if (!keepScroll) this.opts.container.scrollTop = 0;
    this.lastKey = '';
    this.render();
  }

  get length(): number {
    return this.items.length;
  }

  /** Scrolls so that row `index` is in view. */
  scrollToIndex(index: number): void {
    const c = this.opts.container;
    const top = index * this.opts.rowHeight;
    if (top < c.scrollTop) c.scrollTop = top;
    else if (top + this.opts.rowHeight > c.scrollTop + c.clientHeight) {
      c.scrollTop = top + this.opts.rowHeight - c.clientHeight;
    }
    this.render();
  }

  /** Re-renders the rows in view (e.g. after the selection changed). */
  refresh(): void {
    this.lastKey = '';
    this.render();
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render(): void {
    const c = this.opts.container;
    const { start, end } = visibleRange(c.scrollTop, c.clientHeight || 600, this.opts.rowHeight, this.items.length);
    const key = `${start}:${end}:${this.items.length}`;
    if (key === this.lastKey) return;
    this.lastKey = key;
    this.layer.style.transform = `translateY(${start * this.opts.rowHeight}px)`;
    const rows: HTMLElement[] = [];
    for (let i = start; i < end; i++) rows.push(this.opts.renderRow(this.items[i] as T, i));
    this.layer.replaceChildren(...rows);
  }
}
