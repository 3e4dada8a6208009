package io.neardup.text;

/**
 * The keys of jieba's dictionary (its words and their prefixes) numbered densely from 1, for tables about
 * words kept outside this package: an array indexed by a key's number stands in for a hash map of strings
 * (hundreds of thousands of scattered entries, a few cache misses a lookup), and one trie walk per word
 * answers both its number and its dictionary tag.
 */
public final class Lexicon {
    private static final class Holder {
        static final Lexicon SHARED = new Lexicon(JiebaDictionary.shared());
    }

    /** The number of a word that is no key of the dictionary. */
    public static final int NONE = JiebaDictionary.NONE;

    private final JiebaDictionary dictionary;

    private Lexicon(JiebaDictionary dictionary) {
        this.dictionary = dictionary;
    }

    /** The dictionary exported with the plugin, loaded on first use. */
    public static Lexicon shared() {
        return Holder.SHARED;
    }

    /** One more than the largest key number: the length of an array indexed by key numbers. */
    public int size() {
        return dictionary.size();
    }

    /** The number of {@code word} (1 to {@link #size()} - 1), 0 for the empty word, {@link #NONE} for no key. */
    public int key(String word) {
        return dictionary.find(word, 0, word.length());
    }

    /** jieba's dictionary tag of the word numbered {@code key}, or null when it has none (or {@code key} is NONE). */
    public String tag(int key) {
        return dictionary.tag(key);
    }
}
