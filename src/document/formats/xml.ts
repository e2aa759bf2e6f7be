/** Text and attribute values made safe inside XML and XHTML (hOCR, ALTO). */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export function xmlEscape(s: string): string {
  // Control characters other than tab and newlines are not allowed in XML 1.0 at all.
  return s.replace(/[&<>"']/g, (c) => ENTITIES[c]).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}
