/*
** check.c: the harness of check.h.
*/
#include "check.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static char zCase[256];
static int bOpen, nCaseFail, nPass, nFail;

static void close_case(void){
  if( !bOpen ) return;
  if( nCaseFail ) nFail++; else nPass++;
  bOpen = 0;
}

void check_case(const char *zFmt, ...){
  va_list ap;
  close_case();
  va_start(ap, zFmt);
  vsnprintf(zCase, sizeof(zCase), zFmt, ap);
  va_end(ap);
  bOpen = 1;
  nCaseFail = 0;
}

void check_fail(const char *zFile, int iLine, const char *zFmt, ...){
  va_list ap;
  if( !bOpen ) check_case("(unnamed)");
  if( nCaseFail++ < 5 ){
    fprintf(stdout, "FAIL %s (%s:%d): ", zCase, zFile, iLine);
    va_start(ap, zFmt);
    vfprintf(stdout, zFmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
  }
}

int check_case_failed(void){ return nCaseFail>0; }

int check_summary(const char *zName){
  close_case();
  printf("%s: %d passed, %d failed\n", zName, nPass, nFail);
  fflush(stdout);
  return nFail ? 1 : 0;
}

uint64_t check_seed(void){
  const char *z = getenv("CHECK_SEED");
  return z ? strtoull(z, 0, 0) : 20261121u;
}
