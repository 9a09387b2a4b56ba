/* A bare C Dixit loop: the baseline of benchmarks/bench_compiled.py (compiled there with the
 * machine's gcc -O2). Classic rules, 5 random players, an 84-card deck: deal, a storyteller's
 * random card and clue word, each listener's random card, a shuffled display, random votes
 * (never one's own card), full scoring (3 to the storyteller and finders, 2 to the others when
 * all or none find it, 1 a vote received), refill in turn order, the game ends when the last
 * card is drawn. Streams: the same counter-based SplitMix64 as dixit_lab.core.seeding, one a
 * seat. Nothing is recorded: it prints games per CPU second and a checksum of the scores.
 *
 *     bare_dixit GAMES
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { N = 5, H = 6, D = 84, WORDS = 200, MAX_ROUNDS = 500 };

static inline uint64_t mix(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

typedef struct { uint64_t base, count; } stream;

static inline double uniform(stream *s) {
    s->count += 1;
    return (double)(mix(s->base + s->count * 0x9E3779B97F4A7C15ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static inline int below(stream *s, int k) {
    int i = (int)(uniform(s) * k);
    return i < k ? i : k - 1;
}

static void shuffle(int *a, int size, stream *s) {
    for (int i = size - 1; i > 0; i--) {
        int j = below(s, i + 1), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static void take(int *hand, int *len, int index) {
    for (int i = index; i < *len - 1; i++) hand[i] = hand[i + 1];
    *len -= 1;
}

static int64_t play(uint64_t key) {
    stream seat[N], deal = {mix(key ^ 1), 0}, show = {mix(key ^ 2), 0};
    for (int s = 0; s < N; s++) seat[s] = (stream){mix(key ^ (uint64_t)(100 + s)), 0};
    int pile[D], hands[N][H], lens[N], scores[N] = {0};
    for (int i = 0; i < D; i++) pile[i] = i;
    shuffle(pile, D, &deal);
    int plen = D;
    for (int s = 0; s < N; s++) {
        for (int i = 0; i < H; i++) hands[s][i] = pile[--plen];
        lens[s] = H;
    }
    int teller = 0;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        int display[N], owner[N], votes[N], received[N] = {0}, finders = 0;
        int pick = below(&seat[teller], lens[teller]);
        int clue = below(&seat[teller], WORDS);
        (void)clue;
        display[0] = hands[teller][pick];
        owner[0] = teller;
        take(hands[teller], &lens[teller], pick);
        for (int o = 1; o < N; o++) {
            int s = (teller + o) % N, i = below(&seat[s], lens[s]);
            display[o] = hands[s][i];
            owner[o] = s;
            take(hands[s], &lens[s], i);
        }
        for (int i = N - 1; i > 0; i--) {  /* the display's order */
            int j = below(&show, i + 1), t = display[i], u = owner[i];
            display[i] = display[j], owner[i] = owner[j];
            display[j] = t, owner[j] = u;
        }
        for (int o = 1; o < N; o++) {
            int s = (teller + o) % N, k = below(&seat[s], N - 1), v = 0;
            for (int seen = -1;; v++)
                if (owner[v] != s && ++seen == k) break;
            votes[s] = v;
            if (owner[v] == teller) finders++;
            else received[owner[v]]++;
        }
        int all_or_none = finders == 0 || finders == N - 1;
        for (int s = 0; s < N; s++) {
            if (s == teller) scores[s] += all_or_none ? 0 : 3;
            else scores[s] += (all_or_none ? 2 : (owner[votes[s]] == teller ? 3 : 0)) + received[s];
        }
        for (int o = 1; o <= N; o++) {  /* refill in turn order */
            int s = (teller + o) % N;
            while (lens[s] < H && plen > 0) hands[s][lens[s]++] = pile[--plen];
        }
        if (plen == 0) break;
        teller = (teller + 1) % N;
    }
    int64_t total = 0;
    for (int s = 0; s < N; s++) total = total * 31 + scores[s];
    return total;
}

int main(int argc, char **argv) {
    long games = argc > 1 ? atol(argv[1]) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    int64_t check = 0;
    for (long g = 0; g < games; g++) check += play(mix((uint64_t)g * 0xD1B54A32D192ED03ULL));
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double seconds = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("%.1f %lld\n", (double)games / seconds, (long long)check);
    return 0;
}
