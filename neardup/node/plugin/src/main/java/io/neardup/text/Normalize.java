package io.neardup.text;

import com.ibm.icu.text.Normalizer2;

/**
 * The text normalisation of {@code ingest/normalize.py} without the Traditional→Simplified fold ({@code T2S}
 * does that): NFKC, Python's lowercase, runs of Python whitespace collapsed to one space, ends stripped.
 *
 * <p>Every step uses Python's definitions, not Java's: NFKC is ICU4J 70's (Unicode 14.0, as Python 3.11's
 * {@code unicodedata}; the JDK's {@code java.text.Normalizer} is an older Unicode), lowercase is
 * {@link PyCase#lower}, whitespace is {@code str.isspace} ({@link PyChars#isSpace}, which also covers
 * U+001C..U+001F and U+0085, unlike Java's {@code \s}), and letters and digits are {@code str.isalnum}.
 * Text is read by code point, as a Python {@code str} is.
 */
public final class Normalize {
    private Normalize() {}

    private static final Normalizer2 NFKC = Normalizer2.getNFKCInstance();

    /** {@code normalize(text, fold=False)}: {@code re.sub(r"\s+", " ", NFKC(text).lower()).strip()}. */
    public static String normalize(String text) {
        return collapseSpace(PyCase.lower(nfkc(text)));
    }

    /**
     * {@code NFKC.normalize(text)}, the way ICU advises when most text is normalised already: the prefix that
     * passes the quick check is kept as it is (the whole text, usually, with no copy), and only the rest is
     * normalised and appended at that boundary.
     */
    private static String nfkc(String text) {
        int span = NFKC.spanQuickCheckYes(text);
        if (span == text.length()) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 16).append(text, 0, span);
        return NFKC.normalizeSecondAndAppend(out, text.subSequence(span, text.length())).toString();
    }

    /** {@code content_chars(normalized)}: {@code re.sub(r"[\W_]+", "", normalized)}, the letters and digits. */
    public static String contentChars(String normalized) {
        int n = normalized.length();
        char[] out = new char[n];
        int size = 0;
        for (int i = 0; i < n; ) {
            int cp = normalized.codePointAt(i);
            int next = i + Character.charCount(cp);
            if (PyChars.isAlnum(cp)) {
                for (int j = i; j < next; j++) {
                    out[size++] = normalized.charAt(j);
                }
            }
            i = next;
        }
        return new String(out, 0, size);
    }

    /**
     * {@code is_punctuation(token)}: every character is punctuation, a symbol, a separator or "other" (general
     * category P*, S*, Z* or C*, which includes unassigned code points); true for the empty token.
     */
    public static boolean isPunctuation(String token) {
        for (int i = 0; i < token.length(); ) {
            int cp = token.codePointAt(i);
            switch (PyChars.category(cp).charAt(0)) {
                case 'P', 'S', 'Z', 'C' -> i += Character.charCount(cp);
                default -> {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * {@code re.sub(r"\s+", " ", text).strip()}: after the substitution the only whitespace left is the single
     * spaces, so stripping just drops a leading and a trailing one.
     */
    private static String collapseSpace(String text) {
        int n = text.length();
        char[] out = new char[n];
        int size = 0;
        boolean pendingSpace = false;
        for (int i = 0; i < n; ) {
            int cp = text.codePointAt(i);
            int next = i + Character.charCount(cp);
            if (PyChars.isSpace(cp)) {
                pendingSpace = size > 0;
            } else {
                if (pendingSpace) {
                    out[size++] = ' ';
                    pendingSpace = false;
                }
                for (int j = i; j < next; j++) {
                    out[size++] = text.charAt(j);
                }
            }
            i = next;
        }
        return new String(out, 0, size);
    }
}
