package io.neardup.fingerprint;

import java.util.Arrays;
import java.util.List;

/**
 * The distinct words of one document in first-seen order, with how often each occurs: an open-addressing
 * table over the words' own (cached) hash codes, so counting allocates no entry or boxed number per word.
 */
final class WordCounts {
    private final String[] words;
    private final int[] counts;
    /** Index into {@link #words} plus one of the word in each slot, 0 for an empty slot. */
    private final int[] slots;
    private final int mask;
    private int size;

    WordCounts(List<String> text) {
        words = new String[text.size()];
        counts = new int[text.size()];
        int capacity = Integer.highestOneBit(Math.max(8, text.size()) * 2 - 1) << 1; // load factor at most 1/2
        slots = new int[capacity];
        mask = capacity - 1;
        for (String w : text) {
            add(w);
        }
    }

    private void add(String word) {
        int slot = spread(word.hashCode()) & mask;
        while (slots[slot] != 0) {
            int at = slots[slot] - 1;
            if (words[at].equals(word)) {
                counts[at]++;
                return;
            }
            slot = (slot + 1) & mask;
        }
        words[size] = word;
        counts[size] = 1;
        slots[slot] = ++size;
    }

    /** The index of {@code word} among the distinct words, or -1. */
    int indexOf(String word) {
        int slot = spread(word.hashCode()) & mask;
        while (slots[slot] != 0) {
            int at = slots[slot] - 1;
            if (words[at].equals(word)) {
                return at;
            }
            slot = (slot + 1) & mask;
        }
        return -1;
    }

    /** How many distinct words. */
    int size() {
        return size;
    }

    String word(int index) {
        return words[index];
    }

    int count(int index) {
        return counts[index];
    }

    /** The distinct words, in first-seen order. */
    String[] words() {
        return Arrays.copyOf(words, size);
    }

    private static int spread(int hash) {
        return hash ^ (hash >>> 16);
    }
}
