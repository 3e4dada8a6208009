package io.neardup.text;

/**
 * The part-of-speech tag of a word, as {@code ingest/segment.py} {@code Segmenter.tag}: jieba's dictionary
 * tag, else one guessed from the word's shape ({@code _guess_tag}).
 *
 * <p>The guess uses {@code re.match} with {@code ^[0-9][0-9.,:%/-]*$} (a number, "m") and
 * {@code ^[a-z][a-z0-9_.+#&'-]*$} (Latin, "eng"); the classes are ASCII, and Python's {@code $} also matches
 * just before a final {@code "\n"}, so one trailing newline is allowed. Otherwise "nz" for two or more
 * characters, "x" for fewer, counted in code points as Python's {@code len} does.
 */
public final class Tags {
    private static final class Holder {
        static final Tags SHARED = new Tags(Lexicon.shared());
    }

    private final Lexicon lexicon;

    private Tags(Lexicon lexicon) {
        this.lexicon = lexicon;
    }

    /** The tags of the dictionary exported with the plugin, loaded on first use. */
    public static Tags shared() {
        return Holder.SHARED;
    }

    /** The tag of {@code word}: jieba's dictionary tag, or one guessed from its shape. */
    public String tag(String word) {
        return tag(word, lexicon.key(word));
    }

    /** {@link #tag(String)} for a caller that already has {@code word}'s {@link Lexicon#key}. */
    public String tag(String word, int key) {
        String tag = lexicon.tag(key);
        return tag != null ? tag : guess(word);
    }

    /** {@code _guess_tag}: "m" for a number, "eng" for a Latin word, else "nz" or "x" by length. */
    static String guess(String word) {
        // Python's $ matches at the end and before a newline that ends the text
        int end = word.endsWith("\n") ? word.length() - 1 : word.length();
        if (end > 0 && isDigit(word.charAt(0)) && all(word, end, "0123456789.,:%/-")) {
            return "m";
        }
        if (end > 0 && isLower(word.charAt(0)) && all(word, end, "abcdefghijklmnopqrstuvwxyz0123456789_.+#&'-")) {
            return "eng";
        }
        return word.codePointCount(0, word.length()) >= 2 ? "nz" : "x";
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isLower(char c) {
        return c >= 'a' && c <= 'z';
    }

    /** Every character of {@code word[1, end)} is in {@code allowed}. */
    private static boolean all(String word, int end, String allowed) {
        for (int i = 1; i < end; i++) {
            if (allowed.indexOf(word.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }
}
