/*
** dbgen.c: TPC-H data for bench/tpch.py, written for this project (no code
** of the official dbgen), in C11 with no dependency.
**
**   make build/tpch_dbgen
**   ./build/tpch_dbgen [-s SF] TABLE      one table as '|'-separated lines
**
** TABLE is one of region nation supplier customer part partsupp orders
** lineitem; SF is the scale factor (default 1; 0.01 for the tests).  Each
** line holds the table's columns in the specification's order, with no
** trailing '|': integers, money with two decimals ("-12.05"), dates as
** YYYY-MM-DD, text with neither '|' nor a newline.
**
** What it follows (TPC-H specification 3.0, clauses 4.2.2-4.2.3; see
** docs/tpch.md for where it simplifies):
**   1. Cardinalities: SF*10000 suppliers, SF*150000 customers, SF*200000
**      parts with 4 partsupp rows each, SF*1500000 orders of 1-7
**      lineitems each, 25 nations, 5 regions.  Order keys are sparse: the
**      first 8 of every 32.
**   2. Value domains of 4.2.3: names, v-string addresses, phone numbers
**      "CC-LLL-LLL-LLLL" with CC = nation + 10, balances in [-999.99,
**      9999.99], p_name from 5 distinct words of the 92 colours, p_mfgr,
**      p_brand, p_type and p_container from their syllables, the retail
**      price formula, partsupp's and lineitem's supplier formula, segments,
**      priorities, clerks, ship instructions and modes.
**   3. Dates: o_orderdate uniform in [1992-01-01, 1998-12-31 - 151 days];
**      ship = order + [1,121], commit = order + [30,90], receipt = ship +
**      [1,30]; l_returnflag R or A when receipt <= 1995-06-17 (CURRENTDATE)
**      else N; l_linestatus O when ship > CURRENTDATE else F; o_orderstatus
**      F, O or P from its lines; o_totalprice from its lines, in cents.
**   4. Customers whose key is a multiple of 3 place no order.
**   5. Comments: substrings of a 4 MiB text pool made from the
**      specification's sentence grammar and weighted word lists (4.2.2.10,
**      simplified), so words such as "special ... requests" (Q13) occur at
**      the grammar's rates; about 5 in 10000 suppliers get "Customer ...
**      Complaints" (Q16) and as many "Customer ... Recommends".
**
** How it works: every column draws from its own stream, seeded by the
** column and the row (splitmix64 of both), so any table at any SF is the
** same on every run and machine, whatever else is generated.  An order and
** its lines are made together (the order's total and status need the
** lines); `orders` and `lineitem` each make them again and print their
** half.  Output goes through one buffer; nothing is allocated per row.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ---------------------------------------------------- */

typedef struct Rng { uint64_t s; } Rng;

static uint64_t mix64(uint64_t z){
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t rngNext(Rng *r){
  r->s += 0x9e3779b97f4a7c15ULL;
  return mix64(r->s);
}

/* Column streams: one id per table column that draws values. */
enum {
  S_NATION_CMT = 1, S_REGION_CMT,
  S_SUPP_ADDR, S_SUPP_NATION, S_SUPP_PHONE, S_SUPP_BAL, S_SUPP_CMT, S_SUPP_SPECIAL,
  S_CUST_ADDR, S_CUST_NATION, S_CUST_PHONE, S_CUST_BAL, S_CUST_SEG, S_CUST_CMT,
  S_PART_NAME, S_PART_MFGR, S_PART_TYPE, S_PART_SIZE, S_PART_CONT, S_PART_CMT,
  S_PS_QTY, S_PS_COST, S_PS_CMT,
  S_ORD_CUST, S_ORD_DATE, S_ORD_PRIO, S_ORD_CLERK, S_ORD_CMT,
  S_LINE_COUNT, S_LINE_PART, S_LINE_SUPP, S_LINE_QTY, S_LINE_DISC, S_LINE_TAX,
  S_LINE_SHIP, S_LINE_COMMIT, S_LINE_RECEIPT, S_LINE_FLAG, S_LINE_INSTR, S_LINE_MODE,
  S_LINE_CMT, S_POOL
};

/* The stream of column `col` at row `row`. */
static Rng rngAt(int col, uint64_t row){
  Rng r = { mix64(mix64((uint64_t)col * 0x100000001b3ULL) ^ row) };
  return r;
}

/* A uniform integer in [lo, hi] (hi - lo < 2^32). */
static int64_t rngInt(Rng *r, int64_t lo, int64_t hi){
  uint64_t span = (uint64_t)(hi - lo) + 1;
  return lo + (int64_t)(((rngNext(r) >> 32) * span) >> 32);
}

/* ---- output ------------------------------------------------------------ */

static char aOut[1 << 20];
static size_t nOut;

static void outFlush(void){
  if( nOut && fwrite(aOut, 1, nOut, stdout)!=nOut ){
    perror("tpch_dbgen: write");
    exit(1);
  }
  nOut = 0;
}

/* Every row is far shorter than 4 KiB: one check a row. */
static void outRowEnd(void){
  aOut[nOut++] = '\n';
  if( nOut > sizeof(aOut) - 4096 ) outFlush();
}

static void outBytes(const char *z, size_t n){
  memcpy(aOut + nOut, z, n);
  nOut += n;
}

static void outStr(const char *z){ outBytes(z, strlen(z)); }
static void outSep(void){ aOut[nOut++] = '|'; }

static void outInt(int64_t v){
  char a[24];
  int i = 24;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do{ a[--i] = (char)('0' + u % 10); u /= 10; }while( u );
  if( v < 0 ) a[--i] = '-';
  outBytes(a + i, (size_t)(24 - i));
}

/* Cents as money: -5 -> "-0.05". */
static void outMoney(int64_t cents){
  uint64_t u = cents < 0 ? (uint64_t)0 - (uint64_t)cents : (uint64_t)cents;
  if( cents < 0 ) aOut[nOut++] = '-';
  outInt((int64_t)(u / 100));
  aOut[nOut++] = '.';
  aOut[nOut++] = (char)('0' + u % 100 / 10);
  aOut[nOut++] = (char)('0' + u % 10);
}

/* "Prefix#" and n in 9 digits, zero-padded. */
static void outKeyName(const char *zPrefix, int64_t n){
  char a[9];
  outStr(zPrefix);
  for(int i = 8; i >= 0; i--){ a[i] = (char)('0' + n % 10); n /= 10; }
  outBytes(a, 9);
}

/* ---- dates ------------------------------------------------------------- */

/* Days are counted from 1992-01-01 (day 0). */
#define START_DAY   0
#define END_DAY     2556              /* 1998-12-31 */
#define CURRENT_DAY 1263              /* 1995-06-17 */
#define N_DAY       (END_DAY + 1)

static char aDate[N_DAY][10];

static void datesInit(void){
  static const int aMonth[12] = { 31,28,31,30,31,30,31,31,30,31,30,31 };
  int y = 1992, m = 0, d = 1;
  for(int i = 0; i < N_DAY; i++){
    char *z = aDate[i];
    z[0] = (char)('0' + y / 1000); z[1] = (char)('0' + y / 100 % 10);
    z[2] = (char)('0' + y / 10 % 10); z[3] = (char)('0' + y % 10);
    z[4] = '-'; z[5] = (char)('0' + (m + 1) / 10); z[6] = (char)('0' + (m + 1) % 10);
    z[7] = '-'; z[8] = (char)('0' + d / 10); z[9] = (char)('0' + d % 10);
    int nDays = aMonth[m] + (m==1 && y%4==0);
    if( ++d > nDays ){ d = 1; if( ++m==12 ){ m = 0; y++; } }
  }
}

static void outDate(int day){ outBytes(aDate[day], 10); }

/* ---- word lists (4.2.2.13 and 4.2.3) -------------------------------- */

static const char *const azColour[] = {
  "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
  "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon",
  "chocolate", "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim",
  "dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost",
  "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace",
  "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium",
  "metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive",
  "orange", "orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder",
  "puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon", "sandy",
  "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan",
  "thistle", "tomato", "turquoise", "violet", "wheat", "white", "yellow"
};
#define N_COLOUR ((int)(sizeof(azColour)/sizeof(azColour[0])))
_Static_assert(sizeof(azColour)/sizeof(azColour[0])==92, "the 92 colours of P_NAME");

static const char *const azType1[] = { "STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO" };
static const char *const azType2[] = { "ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED" };
static const char *const azType3[] = { "TIN", "NICKEL", "BRASS", "STEEL", "COPPER" };
static const char *const azCont1[] = { "SM", "LG", "MED", "JUMBO", "WRAP" };
static const char *const azCont2[] = { "CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM" };
static const char *const azSegment[] = { "AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD" };
static const char *const azPriority[] = { "1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW" };
static const char *const azInstruct[] = { "DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN" };
static const char *const azMode[] = { "REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB" };
static const char *const azRegion[] = { "AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST" };
static const struct { const char *zName; int iRegion; } aNation[25] = {
  {"ALGERIA",0}, {"ARGENTINA",1}, {"BRAZIL",1}, {"CANADA",1}, {"EGYPT",4}, {"ETHIOPIA",0},
  {"FRANCE",3}, {"GERMANY",3}, {"INDIA",2}, {"INDONESIA",2}, {"IRAN",4}, {"IRAQ",4},
  {"JAPAN",2}, {"JORDAN",4}, {"KENYA",0}, {"MOROCCO",0}, {"MOZAMBIQUE",0}, {"PERU",1},
  {"CHINA",2}, {"ROMANIA",3}, {"SAUDI ARABIA",4}, {"VIETNAM",2}, {"RUSSIA",3},
  {"UNITED KINGDOM",3}, {"UNITED STATES",1}
};
#define N_OF(a) ((int64_t)(sizeof(a)/sizeof((a)[0])))

/* The text grammar's word lists, each with its weights (4.2.2.13). */
static const char *const azNoun[] = {
  "packages", "requests", "accounts", "deposits", "foxes", "ideas", "theodolites",
  "pinto beans", "instructions", "dependencies", "excuses", "platelets", "asymptotes",
  "courts", "dolphins", "multipliers", "sauternes", "warthogs", "frets", "dinos",
  "attainments", "somas", "Tiresias", "patterns", "forges", "braids", "frays", "warhorses",
  "dugouts", "notornis", "epitaphs", "pearls", "tithes", "waters", "orbits", "gifts",
  "sheaves", "depths", "sentiments", "decoys", "realms", "pains", "grouches", "escapades",
  "hockey players" };
static const int aNounW[] = { 40,40,40,40,20,20,20,20,20,10,10,10,10,5,5,
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 };
static const char *const azVerb[] = {
  "sleep", "wake", "are", "cajole", "haggle", "nag", "use", "boost", "affix", "detect",
  "integrate", "maintain", "nod", "was", "lose", "sublate", "solve", "thrash", "promise",
  "engage", "hinder", "print", "x-ray", "breach", "eat", "grow", "impress", "mold",
  "poach", "serve", "run", "dazzle", "snooze", "doze", "unwind", "kindle", "play",
  "hang", "believe", "doubt" };
static const int aVerbW[] = { 20,20,20,20,20,10,10,10,5,5,5,
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 };
static const char *const azAdj[] = {
  "special", "pending", "unusual", "express", "furious", "sly", "careful", "blithe",
  "quick", "fluffy", "slow", "quiet", "ruthless", "thin", "close", "dogged", "daring",
  "brave", "stealthy", "permanent", "enticing", "idle", "busy", "regular", "final",
  "ironic", "even", "bold", "silent" };
static const int aAdjW[] = { 20,20,20,20,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,50,40,40,30,20,10 };
static const char *const azAdv[] = {
  "sometimes", "always", "never", "furiously", "slyly", "carefully", "blithely",
  "quickly", "fluffily", "slowly", "quietly", "ruthlessly", "thinly", "closely",
  "doggedly", "daringly", "bravely", "stealthily", "permanently", "enticingly", "idly",
  "busily", "regularly", "finally", "ironically", "evenly", "boldly", "silently" };
static const int aAdvW[] = { 1,1,1,50,50,50,40,30,20,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 };
static const char *const azPrep[] = {
  "about", "above", "according to", "across", "after", "against", "along",
  "alongside of", "among", "around", "at", "atop", "before", "behind", "beneath",
  "beside", "besides", "between", "beyond", "by", "despite", "during", "except", "for",
  "from", "in place of", "inside", "instead of", "into", "near", "of", "on", "outside",
  "over", "past", "since", "through", "throughout", "to", "toward", "under", "until",
  "up", "upon", "without", "with", "within" };
static const int aPrepW[] = { 50,50,50,50,50,50,50,50,50,50,10,
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 };
static const char *const azAux[] = {
  "do", "may", "might", "shall", "will", "would", "can", "could", "should", "ought to",
  "must", "will have to", "shall have to", "could have to", "should have to",
  "must have to", "need to", "try to" };
static const int aAuxW[] = { 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 };
static const char *const azTerm[] = { ".", ";", ":", "?", "!", "--" };
static const int aTermW[] = { 50,1,1,1,1,1 };

static int weightedPick(Rng *r, const int *aW, int n){
  int total = 0;
  for(int i = 0; i < n; i++) total += aW[i];
  int x = (int)rngInt(r, 0, total - 1);
  for(int i = 0; i < n; i++){
    if( x < aW[i] ) return i;
    x -= aW[i];
  }
  return n - 1;
}

/* ---- the text pool ----------------------------------------------------- */

#define POOL_SIZE (1 << 22)
static char aPool[POOL_SIZE + 256];
static size_t nPool;

static void poolWord(const char *z){
  size_t n = strlen(z);
  memcpy(aPool + nPool, z, n);
  nPool += n;
}

static void poolPick(Rng *r, const char *const *az, const int *aW, int n){
  poolWord(az[weightedPick(r, aW, n)]);
}
#define POOL_PICK(r, list, w) poolPick(r, list, w, (int)N_OF(w))

/* Noun phrase: N | J N | J, J N | D J N (weights 10, 20, 10, 50). */
static void poolNounPhrase(Rng *r){
  static const int aW[] = { 10, 20, 10, 50 };
  switch( weightedPick(r, aW, 4) ){
    case 1: POOL_PICK(r, azAdj, aAdjW); poolWord(" "); break;
    case 2: POOL_PICK(r, azAdj, aAdjW); poolWord(", "); POOL_PICK(r, azAdj, aAdjW); poolWord(" "); break;
    case 3: POOL_PICK(r, azAdv, aAdvW); poolWord(" "); POOL_PICK(r, azAdj, aAdjW); poolWord(" "); break;
  }
  POOL_PICK(r, azNoun, aNounW);
}

/* Verb phrase: V | X V | V D | X V D (weights 30, 1, 40, 1). */
static void poolVerbPhrase(Rng *r){
  static const int aW[] = { 30, 1, 40, 1 };
  int k = weightedPick(r, aW, 4);
  if( k==1 || k==3 ){ POOL_PICK(r, azAux, aAuxW); poolWord(" "); }
  POOL_PICK(r, azVerb, aVerbW);
  if( k>=2 ){ poolWord(" "); POOL_PICK(r, azAdv, aAdvW); }
}

static void poolPrepPhrase(Rng *r){
  POOL_PICK(r, azPrep, aPrepW);
  poolWord(" the ");
  poolNounPhrase(r);
}

/* Sentences N V T | N V P T | N V N T | N P V N T | N P V P T (3,3,3,1,1),
** separated by spaces, until the pool is full. */
static void poolInit(void){
  static const int aW[] = { 3, 3, 3, 1, 1 };
  Rng r = rngAt(S_POOL, 0);
  while( nPool < POOL_SIZE ){
    int k = weightedPick(&r, aW, 5);
    poolNounPhrase(&r);
    poolWord(" ");
    if( k>=3 ){ poolPrepPhrase(&r); poolWord(" "); }
    poolVerbPhrase(&r);
    if( k==1 || k==4 ){ poolWord(" "); poolPrepPhrase(&r); }
    if( k==2 || k==3 ){ poolWord(" "); poolNounPhrase(&r); }
    POOL_PICK(&r, azTerm, aTermW);
    poolWord(" ");
  }
}

/* A comment of [lo, hi] characters: a piece of the pool. */
static void outText(Rng *r, int lo, int hi){
  int n = (int)rngInt(r, lo, hi);
  size_t off = (size_t)rngInt(r, 0, (int64_t)(POOL_SIZE - (size_t)n));
  outBytes(aPool + off, (size_t)n);
}

/* [lo, hi] characters of 0-9a-zA-Z and ',' (a v-string of 4.2.2.7). */
static void outVString(Rng *r, int lo, int hi){
  static const char az[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.";
  int n = (int)rngInt(r, lo, hi);
  uint64_t bits = 0;
  for(int i = 0; i < n; i++){
    if( i % 10 == 0 ) bits = rngNext(r);
    aOut[nOut++] = az[bits & 63];
    bits >>= 6;
  }
}

static void outPhone(Rng *r, int nation){
  outInt(nation + 10); outStr("-");
  outInt(rngInt(r, 100, 999)); outStr("-");
  outInt(rngInt(r, 100, 999)); outStr("-");
  outInt(rngInt(r, 1000, 9999));
}

/* ---- the tables -------------------------------------------------------- */

static int64_t nSupp, nCust, nPart, nOrder, nClerk;

static void genRegion(void){
  for(int i = 0; i < 5; i++){
    Rng r = rngAt(S_REGION_CMT, (uint64_t)i);
    outInt(i); outSep(); outStr(azRegion[i]); outSep(); outText(&r, 31, 115);
    outRowEnd();
  }
}

static void genNation(void){
  for(int i = 0; i < 25; i++){
    Rng r = rngAt(S_NATION_CMT, (uint64_t)i);
    outInt(i); outSep(); outStr(aNation[i].zName); outSep(); outInt(aNation[i].iRegion);
    outSep(); outText(&r, 31, 114);
    outRowEnd();
  }
}

/* s_comment of [25, 100] characters; about 5 in 10000 hold "Customer ...
** Complaints" and as many "Customer ... Recommends" (Q16), written over
** the text at random places. */
static void outSupplierComment(int64_t key){
  Rng r = rngAt(S_SUPP_CMT, (uint64_t)key);
  Rng s = rngAt(S_SUPP_SPECIAL, (uint64_t)key);
  size_t start = nOut;
  outText(&r, 25, 100);
  int64_t k = rngInt(&s, 1, 10000);
  if( k <= 10 ){
    const char *zEnd = k <= 5 ? "Complaints" : "Recommends";
    int n = (int)(nOut - start);
    int64_t a = rngInt(&s, 0, n - 19);
    int64_t b = rngInt(&s, a + 9, n - 10);
    memcpy(aOut + start + a, "Customer ", 9);
    memcpy(aOut + start + b, zEnd, 10);
  }
}

static void genSupplier(void){
  for(int64_t k = 1; k <= nSupp; k++){
    Rng ra = rngAt(S_SUPP_ADDR, (uint64_t)k), rn = rngAt(S_SUPP_NATION, (uint64_t)k);
    Rng rp = rngAt(S_SUPP_PHONE, (uint64_t)k), rb = rngAt(S_SUPP_BAL, (uint64_t)k);
    int nation = (int)rngInt(&rn, 0, 24);
    outInt(k); outSep(); outKeyName("Supplier#", k); outSep();
    outVString(&ra, 10, 40); outSep(); outInt(nation); outSep();
    outPhone(&rp, nation); outSep(); outMoney(rngInt(&rb, -99999, 999999)); outSep();
    outSupplierComment(k);
    outRowEnd();
  }
}

static void genCustomer(void){
  for(int64_t k = 1; k <= nCust; k++){
    Rng ra = rngAt(S_CUST_ADDR, (uint64_t)k), rn = rngAt(S_CUST_NATION, (uint64_t)k);
    Rng rp = rngAt(S_CUST_PHONE, (uint64_t)k), rb = rngAt(S_CUST_BAL, (uint64_t)k);
    Rng rs = rngAt(S_CUST_SEG, (uint64_t)k), rc = rngAt(S_CUST_CMT, (uint64_t)k);
    int nation = (int)rngInt(&rn, 0, 24);
    outInt(k); outSep(); outKeyName("Customer#", k); outSep();
    outVString(&ra, 10, 40); outSep(); outInt(nation); outSep();
    outPhone(&rp, nation); outSep(); outMoney(rngInt(&rb, -99999, 999999)); outSep();
    outStr(azSegment[rngInt(&rs, 0, N_OF(azSegment) - 1)]); outSep();
    outText(&rc, 29, 116);
    outRowEnd();
  }
}

/* P_RETAILPRICE in cents: 90000 + ((key/10) mod 20001) + 100 * (key mod 1000). */
static int64_t retailCents(int64_t key){
  return 90000 + (key / 10) % 20001 + 100 * (key % 1000);
}

/* The i-th supplier (0..3) of a part: 4.2.3's PS_SUPPKEY. */
static int64_t partSupplier(int64_t part, int64_t i){
  return (part + i * (nSupp / 4 + (part - 1) / nSupp)) % nSupp + 1;
}

static void genPart(void){
  for(int64_t k = 1; k <= nPart; k++){
    Rng rn = rngAt(S_PART_NAME, (uint64_t)k), rm = rngAt(S_PART_MFGR, (uint64_t)k);
    Rng rt = rngAt(S_PART_TYPE, (uint64_t)k), rs = rngAt(S_PART_SIZE, (uint64_t)k);
    Rng rc = rngAt(S_PART_CONT, (uint64_t)k), rx = rngAt(S_PART_CMT, (uint64_t)k);
    int aWord[5];
    for(int i = 0; i < 5; i++){
      int w, dup;
      do{
        w = (int)rngInt(&rn, 0, N_COLOUR - 1);
        dup = 0;
        for(int j = 0; j < i; j++) dup |= aWord[j]==w;
      }while( dup );
      aWord[i] = w;
    }
    int64_t m = rngInt(&rm, 1, 5), n = rngInt(&rm, 1, 5);
    outInt(k); outSep();
    for(int i = 0; i < 5; i++){ if( i ) outStr(" "); outStr(azColour[aWord[i]]); }
    outSep(); outStr("Manufacturer#"); outInt(m); outSep();
    outStr("Brand#"); outInt(m * 10 + n); outSep();
    outStr(azType1[rngInt(&rt, 0, N_OF(azType1) - 1)]); outStr(" ");
    outStr(azType2[rngInt(&rt, 0, N_OF(azType2) - 1)]); outStr(" ");
    outStr(azType3[rngInt(&rt, 0, N_OF(azType3) - 1)]); outSep();
    outInt(rngInt(&rs, 1, 50)); outSep();
    outStr(azCont1[rngInt(&rc, 0, N_OF(azCont1) - 1)]); outStr(" ");
    outStr(azCont2[rngInt(&rc, 0, N_OF(azCont2) - 1)]); outSep();
    outMoney(retailCents(k)); outSep();
    outText(&rx, 5, 22);
    outRowEnd();
  }
}

static void genPartsupp(void){
  for(int64_t k = 1; k <= nPart; k++){
    for(int64_t i = 0; i < 4; i++){
      uint64_t row = (uint64_t)k * 4 + (uint64_t)i;
      Rng rq = rngAt(S_PS_QTY, row), rc = rngAt(S_PS_COST, row), rx = rngAt(S_PS_CMT, row);
      outInt(k); outSep(); outInt(partSupplier(k, i)); outSep();
      outInt(rngInt(&rq, 1, 9999)); outSep(); outMoney(rngInt(&rc, 100, 100000)); outSep();
      outText(&rx, 49, 198);
      outRowEnd();
    }
  }
}

/* One order and its lines, as both tables need them. */
typedef struct Line {
  int64_t part, supp, qty, price, disc, tax;   /* price, disc, tax: cents */
  int ship, commit, receipt;
  char flag, status;
} Line;

typedef struct Order {
  int64_t key, cust, total;
  int date, nLine;
  char status;
  Line aLine[7];
} Order;

/* Order i (0-based): key = the (i mod 8)-th of the 32 keys from 32*(i/8). */
static void makeOrder(int64_t i, Order *o){
  Rng rc = rngAt(S_ORD_CUST, (uint64_t)i), rd = rngAt(S_ORD_DATE, (uint64_t)i);
  Rng rn = rngAt(S_LINE_COUNT, (uint64_t)i), rp = rngAt(S_LINE_PART, (uint64_t)i);
  Rng rs = rngAt(S_LINE_SUPP, (uint64_t)i), rq = rngAt(S_LINE_QTY, (uint64_t)i);
  Rng rx = rngAt(S_LINE_DISC, (uint64_t)i), rt = rngAt(S_LINE_TAX, (uint64_t)i);
  Rng r1 = rngAt(S_LINE_SHIP, (uint64_t)i), r2 = rngAt(S_LINE_COMMIT, (uint64_t)i);
  Rng r3 = rngAt(S_LINE_RECEIPT, (uint64_t)i), rf = rngAt(S_LINE_FLAG, (uint64_t)i);
  o->key = i / 8 * 32 + i % 8 + 1;
  /* The j-th key that is not a multiple of 3: 1, 2, 4, 5, 7, ... */
  int64_t j = rngInt(&rc, 0, nCust - nCust / 3 - 1);
  o->cust = j / 2 * 3 + j % 2 + 1;
  o->date = (int)rngInt(&rd, START_DAY, END_DAY - 151);
  o->nLine = (int)rngInt(&rn, 1, 7);
  o->total = 0;
  int nF = 0;
  for(int k = 0; k < o->nLine; k++){
    Line *l = &o->aLine[k];
    l->part = rngInt(&rp, 1, nPart);
    l->supp = partSupplier(l->part, rngInt(&rs, 0, 3));
    l->qty = rngInt(&rq, 1, 50);
    l->price = l->qty * retailCents(l->part);
    l->disc = rngInt(&rx, 0, 10);
    l->tax = rngInt(&rt, 0, 8);
    l->ship = o->date + (int)rngInt(&r1, 1, 121);
    l->commit = o->date + (int)rngInt(&r2, 30, 90);
    l->receipt = l->ship + (int)rngInt(&r3, 1, 30);
    int64_t ra = rngInt(&rf, 0, 1);
    l->flag = l->receipt <= CURRENT_DAY ? (ra ? 'R' : 'A') : 'N';
    l->status = l->ship > CURRENT_DAY ? 'O' : 'F';
    nF += l->status=='F';
    o->total += l->price * (100 - l->disc) / 100 * (100 + l->tax) / 100;
  }
  o->status = nF==o->nLine ? 'F' : nF==0 ? 'O' : 'P';
}

static void genOrders(void){
  Order o;
  for(int64_t i = 0; i < nOrder; i++){
    Rng rp = rngAt(S_ORD_PRIO, (uint64_t)i), rk = rngAt(S_ORD_CLERK, (uint64_t)i);
    Rng rx = rngAt(S_ORD_CMT, (uint64_t)i);
    makeOrder(i, &o);
    outInt(o.key); outSep(); outInt(o.cust); outSep();
    aOut[nOut++] = o.status; outSep(); outMoney(o.total); outSep();
    outDate(o.date); outSep(); outStr(azPriority[rngInt(&rp, 0, N_OF(azPriority) - 1)]);
    outSep(); outKeyName("Clerk#", rngInt(&rk, 1, nClerk)); outSep(); outInt(0); outSep();
    outText(&rx, 19, 78);
    outRowEnd();
  }
}

static void genLineitem(void){
  Order o;
  for(int64_t i = 0; i < nOrder; i++){
    makeOrder(i, &o);
    for(int k = 0; k < o.nLine; k++){
      const Line *l = &o.aLine[k];
      uint64_t row = (uint64_t)i * 8 + (uint64_t)k;
      Rng ri = rngAt(S_LINE_INSTR, row), rm = rngAt(S_LINE_MODE, row);
      Rng rx = rngAt(S_LINE_CMT, row);
      outInt(o.key); outSep(); outInt(l->part); outSep(); outInt(l->supp); outSep();
      outInt(k + 1); outSep(); outInt(l->qty); outSep(); outMoney(l->price); outSep();
      outMoney(l->disc); outSep(); outMoney(l->tax); outSep();
      aOut[nOut++] = l->flag; outSep(); aOut[nOut++] = l->status; outSep();
      outDate(l->ship); outSep(); outDate(l->commit); outSep(); outDate(l->receipt); outSep();
      outStr(azInstruct[rngInt(&ri, 0, N_OF(azInstruct) - 1)]); outSep();
      outStr(azMode[rngInt(&rm, 0, N_OF(azMode) - 1)]); outSep();
      outText(&rx, 10, 43);
      outRowEnd();
    }
  }
}

/* ---- main -------------------------------------------------------------- */

static int64_t scaled(double sf, int64_t base){
  int64_t n = (int64_t)(sf * (double)base + 0.5);
  return n < 1 ? 1 : n;
}

static int usage(void){
  fprintf(stderr, "usage: tpch_dbgen [-s SF] TABLE\n"
                  "  TABLE: region nation supplier customer part partsupp orders lineitem\n"
                  "  SF: scale factor, 0.01 or more (default 1)\n");
  return 2;
}

int main(int argc, char **argv){
  static const struct { const char *zName; void (*xGen)(void); } aTable[] = {
    {"region", genRegion}, {"nation", genNation}, {"supplier", genSupplier},
    {"customer", genCustomer}, {"part", genPart}, {"partsupp", genPartsupp},
    {"orders", genOrders}, {"lineitem", genLineitem},
  };
  double sf = 1.0;
  const char *zTable = 0;
  for(int i = 1; i < argc; i++){
    if( strcmp(argv[i], "-s")==0 && i + 1 < argc ){
      char *zEnd;
      sf = strtod(argv[++i], &zEnd);
      /* Below 0.01, partsupp's supplier formula repeats suppliers. */
      if( *zEnd || !(sf >= 0.01) || sf > 100000 ){
        fprintf(stderr, "tpch_dbgen: bad scale factor '%s'\n", argv[i]);
        return usage();
      }
    }else if( !zTable && argv[i][0]!='-' ){
      zTable = argv[i];
    }else{
      return usage();
    }
  }
  if( !zTable ) return usage();
  nSupp = scaled(sf, 10000);
  nCust = scaled(sf, 150000);
  nPart = scaled(sf, 200000);
  nOrder = scaled(sf, 1500000);
  nClerk = scaled(sf, 1000);
  for(size_t t = 0; t < sizeof(aTable)/sizeof(aTable[0]); t++){
    if( strcmp(zTable, aTable[t].zName)==0 ){
      datesInit();
      poolInit();
      aTable[t].xGen();
      outFlush();
      if( fflush(stdout) ){ perror("tpch_dbgen: write"); return 1; }
      return 0;
    }
  }
  fprintf(stderr, "tpch_dbgen: no table '%s'\n", zTable);
  return usage();
}
