/* stale_marker.c: one more source beside the "good" set's, so the backend
 * built in stale/ carries another build identity, as a library left from
 * older sources does. */
int fx_stale_marker(void);
int fx_stale_marker(void) { return 1; }
