import { useVirtualizer } from '@tanstack/react-virtual';
import { useRef, type RefObject } from 'react';

/** Rows drawn beyond each edge of the view, so keyboard focus and quick scrolls land on drawn rows. */
const OVERSCAN = 10;

export interface WindowedRows<E extends HTMLElement> {
  /** The element that scrolls (it must have a bounded height). */
  scroller: RefObject<E | null>;
  /** Indexes of the rows to draw, first to last. */
  indexes: number[];
  /** Space for the rows above and below the drawn ones, in pixels. */
  before: number;
  after: number;
  /** For each drawn row (with `data-index`): measures it, so a row taller than the others still fits. */
  measure: (row: Element | null) => void;
}

/**
 * The rows of a long list or table in a scrolled box that are in view, plus a margin: a run of
 * hundreds of steps draws a few dozen rows instead of thousands of elements. Rows not yet drawn
 * count as `rowHeight`, so the box scrolls as if all were there.
 */
export function useWindowedRows<E extends HTMLElement>(count: number, rowHeight: number, viewHeight: number): WindowedRows<E> {
  const scroller = useRef<E>(null);
  const virtual = useVirtualizer({
    count,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: OVERSCAN,
    // The first render draws the first screenful, before the box has been measured.
    initialRect: { width: 0, height: viewHeight },
  });
  const items = virtual.getVirtualItems();
  const first = items[0];
  const last = items[items.length - 1];
  return {
    scroller,
    indexes: items.map((i) => i.index),
    before: first?.start ?? 0,
    after: last !== undefined ? virtual.getTotalSize() - last.end : 0,
    measure: virtual.measureElement,
  };
}
