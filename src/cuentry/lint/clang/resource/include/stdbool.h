/* cuentry lint: the compiler's own <stdbool.h>. */
#ifndef CUENTRY_STDBOOL_H
#define CUENTRY_STDBOOL_H
#ifndef __cplusplus
#define bool _Bool
#define true 1
#define false 0
#endif
#define __bool_true_false_are_defined 1
#endif
