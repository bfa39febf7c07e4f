/**
 * The console's User Timing names (`performance.measure`), read by bench:console: the one thing a
 * page tells outside itself. No DOM here, so the bench (Node) imports it as the page does.
 */

/** A list page drawn: from the page's start (or the page turn) to the table in the document. */
export const PAGE_DRAWN = 'needs-a-person:page-drawn';
