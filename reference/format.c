/* format.c — placeholder: number formats land with the foundation issue. */
#include "mmaprobe/format.h"
const mmp_format_info *mmp_format_get_info(mmp_format f) { (void)f; return 0; }
