import { Anchor, createTheme, Modal, defaultVariantColorsResolver, type VariantColorsResolver } from '@mantine/core';

/**
 * Readable text on every tinted surface: the light variants (alerts, light buttons and badges) write in near-black
 * instead of a mid shade of their colour, which fails the contrast check (WCAG AA) on its pale background.
 */
const variantColorResolver: VariantColorsResolver = (input) => {
  const colors = defaultVariantColorsResolver(input);
  if (input.variant === 'light') return { ...colors, color: 'var(--mantine-color-dark-9)' };
  return colors;
};

// Contrast (WCAG AA) is checked by axe on every page in the browser tests: filled colours pick black or white
// text by themselves (autoContrast), links are underlined in running text, and dimmed text is dark enough.
export const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: 8,
  defaultRadius: 'md',
  autoContrast: true,
  variantColorResolver,
  components: {
    Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }),
    // The dialog's × has no text of its own, so a screen reader needs its name.
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
  },
});
