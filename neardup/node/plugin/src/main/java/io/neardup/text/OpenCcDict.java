package io.neardup.text;

import java.util.Arrays;
import java.util.BitSet;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One OpenCC dictionary as a trie over UTF-16 code units, answering OpenCC's one question: the longest key
 * that is a prefix of the text at a position, and the value OpenCC outputs for it.
 *
 * <p>OpenCC walks keys by UTF-8 character, the port by {@code char}; both find the same keys because every
 * key is well-formed text, so a key never ends between the two halves of a surrogate pair. The value kept
 * per key is the first of its values, OpenCC's {@code GetDefault()} (multi-value entries such as
 * {@code 阪 → 阪 坂} list their alternatives after it, and conversion never picks them).
 *
 * <p>Nodes hold their children in sorted {@code char} arrays searched by bisection: the tables are small (a
 * few thousand keys), the lookup allocates nothing, and the structure is immutable once built.
 */
final class OpenCcDict {
    private final String name;
    private final Node root;
    private final int[] firstCodePoints;
    /**
     * The chars a key starts with (the root's labels) as a bitmap: most positions a conversion looks up start
     * no key of most of its dictionaries, and this answers that without a search of a few thousand labels.
     */
    private final BitSet firstChars = new BitSet();

    private OpenCcDict(String name, Node root, int[] firstCodePoints) {
        this.name = name;
        this.root = root;
        this.firstCodePoints = firstCodePoints;
        for (char c : root.labels) {
            firstChars.set(c);
        }
    }

    /** A dictionary of {@code entries} (key to the value OpenCC outputs), named for error messages. */
    static OpenCcDict of(String name, Map<String, String> entries) {
        Objects.requireNonNull(name, "name");
        Builder root = new Builder();
        TreeMap<Integer, Boolean> first = new TreeMap<>();
        for (Map.Entry<String, String> e : entries.entrySet()) {
            String key = e.getKey();
            if (key.isEmpty()) {
                throw new IllegalArgumentException(name + ": empty key");
            }
            Builder node = root;
            for (int i = 0; i < key.length(); i++) {
                node = node.children.computeIfAbsent(key.charAt(i), c -> new Builder());
            }
            node.value = Objects.requireNonNull(e.getValue(), "value of " + key);
            node.keyLength = key.length();
            first.put(key.codePointAt(0), Boolean.TRUE);
        }
        return new OpenCcDict(name, root.build(), first.keySet().stream().mapToInt(Integer::intValue).toArray());
    }

    String name() {
        return name;
    }

    /** Every code point some key starts with, ascending: a text position holding none of them never matches. */
    int[] firstCodePoints() {
        return firstCodePoints.clone();
    }

    /**
     * The entry of the longest key equal to {@code text[start, start + length)} for some length, or null.
     * The entry's {@link Node#keyLength()} says how many chars it covers.
     */
    Node longestPrefix(CharSequence text, int start) {
        if (start >= text.length() || !firstChars.get(text.charAt(start))) {
            return null;
        }
        Node node = root;
        Node best = null;
        for (int i = start, n = text.length(); i < n; i++) {
            node = node.child(text.charAt(i));
            if (node == null) {
                break;
            }
            if (node.value != null) {
                best = node;
            }
        }
        return best;
    }

    /** A trie node; for a key's last char it carries the key's length and output. */
    static final class Node {
        private final char[] labels;
        private final Node[] children;
        private final String value;
        private final int keyLength;

        private Node(char[] labels, Node[] children, String value, int keyLength) {
            this.labels = labels;
            this.children = children;
            this.value = value;
            this.keyLength = keyLength;
        }

        /** The text OpenCC writes for the matched key. */
        String value() {
            return value;
        }

        /** How many chars of the text the matched key covers. */
        int keyLength() {
            return keyLength;
        }

        private Node child(char c) {
            int at = Arrays.binarySearch(labels, c);
            return at >= 0 ? children[at] : null;
        }
    }

    private static final class Builder {
        private final TreeMap<Character, Builder> children = new TreeMap<>();
        private String value;
        private int keyLength;

        private Node build() {
            char[] labels = new char[children.size()];
            Node[] nodes = new Node[children.size()];
            int i = 0;
            for (Map.Entry<Character, Builder> e : children.entrySet()) {
                labels[i] = e.getKey();
                nodes[i] = e.getValue().build();
                i++;
            }
            return new Node(labels, nodes, value, keyLength);
        }
    }
}
