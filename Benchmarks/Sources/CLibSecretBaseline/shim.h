#ifndef LOUPE_CLIBSECRET_H
#define LOUPE_CLIBSECRET_H
#include <libsecret/secret.h>
#endif
