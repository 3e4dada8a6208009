package io.neardup.text;

import java.util.BitSet;
import java.util.List;
import java.util.Objects;

/**
 * One OpenCC conversion step ({@code Conversion::AppendConverted} over a dictionary group), which rewrites
 * the whole text left to right:
 *
 * <ul>
 *   <li>at each position, the group looks for a key starting there; with {@code short_circuit} the first
 *       dictionary (in config order) that has any matching key answers with its longest one, so a phrase
 *       of {@code TSPhrases} wins over the characters it is made of, and {@code TSCharactersExt} over
 *       {@code TSCharacters}; with {@code union} the longest key of any dictionary wins, the earlier
 *       dictionary on a tie;</li>
 *   <li>a match writes the key's value and moves past the key;</li>
 *   <li>otherwise a complete {@linkplain IdeographicDescription ideographic description sequence} is copied
 *       whole, or else one code point is copied.</li>
 * </ul>
 *
 * <p>There is no segmentation and no backtracking: t2s in OpenCC 1.4 runs its chain over the whole text. A
 * code point no key starts with (and that is no description operator) is copied without a trie lookup,
 * like OpenCC's own skip table; this changes nothing but speed.
 */
final class OpenCcConversion {
    /** How a group of dictionaries picks among their matches (OpenCC's {@code DictGroupMatchPolicy}). */
    enum Policy {
        SHORT_CIRCUIT,
        UNION
    }

    private final Policy policy;
    private final OpenCcDict[] dicts;
    /** Code points a key starts with, and the description operators; filled here, only read afterwards. */
    private final BitSet candidates = new BitSet();

    OpenCcConversion(Policy policy, List<OpenCcDict> dicts) {
        this.policy = Objects.requireNonNull(policy, "policy");
        if (dicts.isEmpty()) {
            throw new IllegalArgumentException("a conversion needs at least one dictionary");
        }
        this.dicts = dicts.toArray(new OpenCcDict[0]);
        for (OpenCcDict dict : this.dicts) {
            for (int cp : dict.firstCodePoints()) {
                candidates.set(cp);
            }
        }
        candidates.set(IdeographicDescription.FIRST_OPERATOR, IdeographicDescription.LAST_OPERATOR + 1);
    }

    /**
     * The converted {@code text}, which must be well-formed UTF-16 (no lone surrogates). Only matches change
     * the text, so the output is built from the first match on, and a text without one comes back as it is.
     */
    String apply(String text) {
        int n = text.length();
        StringBuilder out = null;
        int copied = 0; // text[0, copied) is in out
        int i = 0;
        while (i < n) {
            int cp = text.codePointAt(i);
            if (!candidates.get(cp)) {
                i += Character.charCount(cp);
                continue;
            }
            OpenCcDict.Node match = match(text, i);
            if (match != null) {
                if (out == null) {
                    out = new StringBuilder(n + n / 8);
                }
                out.append(text, copied, i).append(match.value());
                i += match.keyLength();
                copied = i;
                continue;
            }
            int ids = IdeographicDescription.sequenceLength(text, i);
            i += ids > 0 ? ids : Character.charCount(cp);
        }
        return out == null ? text : out.append(text, copied, n).toString();
    }

    private OpenCcDict.Node match(String text, int at) {
        OpenCcDict.Node best = null;
        for (OpenCcDict dict : dicts) {
            OpenCcDict.Node found = dict.longestPrefix(text, at);
            if (found == null) {
                continue;
            }
            if (policy == Policy.SHORT_CIRCUIT) {
                return found;
            }
            if (best == null || found.keyLength() > best.keyLength()) {
                best = found;
            }
        }
        return best;
    }
}
