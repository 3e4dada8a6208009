package io.neardup.text;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * jieba's dictionary as the Python side sees it ({@code PreciseCut.logp} and {@code Segmenter.tags}), as a
 * trie over UTF-16 units: the best-route search walks it one character at a time instead of hashing a new
 * substring for every (start, end) pair, and ~500,000 keys fit in a few flat arrays instead of boxed maps.
 *
 * <p>Nodes are numbered breadth-first with children in character order (the export's (length, word) row
 * order gives exactly that), so the children of node {@code n} are the nodes {@code first[n]} to
 * {@code first[n + 1] - 1} and are found by binary search on their labels. Every node is a key of jieba's
 * {@code FREQ}: jieba adds each prefix of a word, so the keys are prefix-closed. A node is a <em>word</em>
 * when it has a log-probability; otherwise it is a mere prefix (frequency 0), which jieba walks through but
 * never scores.
 */
final class JiebaDictionary {
    private static final class Holder {
        static final JiebaDictionary SHARED = load();
    }

    /** No node: {@link #child} and {@link #find} answer this when the text leaves the dictionary. */
    static final int NONE = -1;

    private static final int ROOT = 0;

    /** Node of each one-character key: the root has a child for most CJK characters, so no search there. */
    private final int[] rootChild;
    /** Children of node n: {@code first[n]} (inclusive) to {@code first[n + 1]} (exclusive). */
    private final int[] first;
    /** The character on the edge into each node. */
    private final char[] label;
    /** Python's {@code log(freq) - log(total)} of each node, NaN for a mere prefix. */
    private final double[] logp;
    /** Index into {@link #tagNames} of each node's jieba tag, -1 for none. */
    private final byte[] tag;
    private final String[] tagNames;

    private JiebaDictionary(int[] rootChild, int[] first, char[] label, double[] logp, byte[] tag, String[] tagNames) {
        this.rootChild = rootChild;
        this.first = first;
        this.label = label;
        this.logp = logp;
        this.tag = tag;
        this.tagNames = tagNames;
    }

    /** The dictionary exported with the plugin, loaded on first use. */
    static JiebaDictionary shared() {
        return Holder.SHARED;
    }

    /** The number of nodes, the root included. */
    int size() {
        return label.length;
    }

    /** The node of {@code node}'s key followed by {@code c}, or {@link #NONE}. */
    int child(int node, char c) {
        if (node == ROOT) {
            return rootChild[c];
        }
        int lo = first[node];
        int hi = first[node + 1] - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            char m = label[mid];
            if (m < c) {
                lo = mid + 1;
            } else if (m > c) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return NONE;
    }

    /** The node of {@code text[from, to)}, or {@link #NONE} if it is no key (the empty text is the root). */
    int find(CharSequence text, int from, int to) {
        int node = ROOT;
        for (int i = from; i < to && node != NONE; i++) {
            node = child(node, text.charAt(i));
        }
        return node;
    }

    /** True when {@code node} is a word (it has a frequency), false for a mere prefix or {@link #NONE}. */
    boolean isWord(int node) {
        return node > ROOT && !Double.isNaN(logp[node]);
    }

    /** The log-probability of a word's node; NaN for a mere prefix. */
    double logp(int node) {
        return logp[node];
    }

    /** jieba's dictionary tag of {@code node}'s word, or null when it has none (or {@code node} is NONE). */
    String tag(int node) {
        if (node <= ROOT || tag[node] < 0) {
            return null;
        }
        return tagNames[tag[node]];
    }

    private static JiebaDictionary load() {
        Builder builder = new Builder();
        JiebaData.rows("dictionary.tsv", 3, builder::add);
        return builder.build();
    }

    /** Numbers the rows as they come, checking the order and prefix-closure the layout depends on. */
    private static final class Builder {
        private final List<String> tagNames = new ArrayList<>();
        private final Map<String, Integer> tagIndex = new HashMap<>();
        /** Parsed scores: ~5,000 distinct ones (jieba's frequencies repeat), and a cold parseDouble is slow. */
        private final Map<String, Double> scores = new HashMap<>();
        private char[] label = new char[1 << 19];
        private double[] logp = new double[1 << 19];
        private byte[] tag = new byte[1 << 19];
        private int[] parent = new int[1 << 19];
        private int size = 1; // node 0 is the root, the empty key
        /** Keys of the previous and the current length, and the node number of the first of each. */
        private List<String> previous = List.of("");
        private int previousFirst = ROOT;
        private List<String> current = new ArrayList<>();
        private int currentFirst = 1;
        private int cursor = 0; // into previous: parents come in order
        private String last = "";

        void add(String[] row) {
            String word = row[0];
            int length = word.length();
            if (length == 0) {
                throw new IllegalArgumentException("empty dictionary word");
            }
            if (length < last.length() || (length == last.length() && word.compareTo(last) <= 0)) {
                throw new IllegalArgumentException("rows not sorted by (length, word): " + word + " after " + last);
            }
            if (length > last.length()) {
                if (length != last.length() + 1) {
                    throw new IllegalArgumentException("no key of length " + (length - 1) + " before " + word);
                }
                previous = current.isEmpty() ? previous : current;
                previousFirst = current.isEmpty() ? previousFirst : currentFirst;
                current = new ArrayList<>();
                currentFirst = size;
                cursor = 0;
            }
            while (cursor < previous.size() && compareToPrefix(previous.get(cursor), word) < 0) {
                cursor++;
            }
            if (cursor == previous.size() || compareToPrefix(previous.get(cursor), word) != 0) {
                throw new IllegalArgumentException(
                    "dictionary not prefix-closed: no row for " + word.substring(0, length - 1) + " of " + word);
            }
            grow();
            label[size] = word.charAt(length - 1);
            parent[size] = previousFirst + cursor;
            logp[size] = row[1].isEmpty() ? Double.NaN : scores.computeIfAbsent(row[1], Double::parseDouble);
            tag[size] = row[2].isEmpty() ? -1 : tagIndex(row[2]);
            current.add(word);
            last = word;
            size++;
        }

        /** {@code key} (one character shorter than {@code word}) compared with {@code word} less its last character. */
        private static int compareToPrefix(String key, String word) {
            for (int i = 0; i < key.length(); i++) {
                int d = key.charAt(i) - word.charAt(i);
                if (d != 0) {
                    return d;
                }
            }
            return 0;
        }

        private byte tagIndex(String name) {
            Integer index = tagIndex.get(name);
            if (index == null) {
                if (tagNames.size() == Byte.MAX_VALUE + 1) {
                    throw new IllegalArgumentException("more than 128 distinct jieba tags");
                }
                index = tagNames.size();
                tagNames.add(name);
                tagIndex.put(name, index);
            }
            return (byte) (int) index;
        }

        private void grow() {
            if (size == label.length) {
                int n = size * 2;
                label = Arrays.copyOf(label, n);
                logp = Arrays.copyOf(logp, n);
                tag = Arrays.copyOf(tag, n);
                parent = Arrays.copyOf(parent, n);
            }
        }

        JiebaDictionary build() {
            // children of each node are contiguous and in node order, so the ranges are running counts
            int[] first = new int[size + 1];
            int[] children = new int[size];
            for (int n = 1; n < size; n++) {
                children[parent[n]]++;
            }
            first[ROOT] = 1;
            for (int n = 0; n < size; n++) {
                first[n + 1] = first[n] + children[n];
            }
            int[] rootChild = new int[Character.MAX_VALUE + 1];
            Arrays.fill(rootChild, NONE);
            for (int n = first[ROOT]; n < first[ROOT + 1]; n++) {
                rootChild[label[n]] = n;
            }
            return new JiebaDictionary(
                rootChild,
                first,
                Arrays.copyOf(label, size),
                Arrays.copyOf(logp, size),
                Arrays.copyOf(tag, size),
                tagNames.toArray(String[]::new));
        }
    }
}
