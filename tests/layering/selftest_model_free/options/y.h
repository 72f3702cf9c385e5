// An options header that names a model header.
#include "model/z.h"
