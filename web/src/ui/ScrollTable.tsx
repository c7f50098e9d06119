/**
 * A table that scrolls sideways on a narrow screen instead of widening the page; the scrolling region is named and
 * reachable by keyboard (axe: scrollable-region-focusable).
 */
import { Table, type TableProps } from '@mantine/core';
import type { ReactNode } from 'react';

export function ScrollTable({
  label,
  minWidth,
  children,
  ...props
}: { label: string; minWidth: number; children: ReactNode } & TableProps) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <div role="region" aria-label={label} tabIndex={0} style={{ overflowX: 'auto' }}>
      <Table miw={minWidth} {...props}>
        {children}
      </Table>
    </div>
  );
}
