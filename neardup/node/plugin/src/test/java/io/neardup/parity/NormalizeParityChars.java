package io.neardup.parity;

import com.ibm.icu.text.Normalizer2;
import io.neardup.text.Normalize;
import io.neardup.text.PyCase;
import io.neardup.text.PyChars;
import java.util.ArrayList;
import java.util.List;

/**
 * The per-code-point answers of the Unicode layer, one block of 256 code points per line: the input line is
 * the block number, the answer a list of records (the layout {@code tests/plugin/test_normalize_parity.py}
 * computes from Python's own functions). Runs of code points with the same predicates collapse into one
 * record, and a mapping is listed only where it changes the character, so all 0x110000 code points fit in a
 * few megabytes.
 *
 * <ul>
 *   <li>{@code r FIRST LAST CATEGORY:FLAGS:SIGMA}: {@code unicodedata.category}, the flags {@code s}
 *       ({@code isspace}), {@code S} ({@code \s}), {@code a} ({@code isalnum}), {@code w} ({@code \w}),
 *       {@code p} ({@code is_punctuation}), and the number of final sigmas in the lowercase of
 *       "a" c "Σ", c "Σ", "aΣ" c and "aΣ" c "a" (the Cased and Case_Ignorable properties at work)</li>
 *   <li>{@code n CP MAPPED}, {@code l CP MAPPED}, {@code k CP MAPPED}: NFKC, lower, and NFKC then lower of the
 *       single character, where different from it (code points in hex, dot-separated)</li>
 * </ul>
 */
public final class NormalizeParityChars {
    private NormalizeParityChars() {}

    private static final Normalizer2 NFKC = Normalizer2.getNFKCInstance();
    private static final int BLOCK = 256;

    public static void main(String[] args) {
        Lines.serve(line -> Lines.encode(block(Integer.parseInt(line))));
    }

    private static List<String> block(int number) {
        List<String> records = new ArrayList<>();
        List<String> mappings = new ArrayList<>();
        int runStart = -1;
        String runKey = null;
        for (int cp = number * BLOCK; cp < (number + 1) * BLOCK; cp++) {
            String c = new String(Character.toChars(cp));
            String key = key(cp, c);
            if (!key.equals(runKey)) {
                if (runKey != null) {
                    records.add(String.format("r %x %x %s", runStart, cp - 1, runKey));
                }
                runStart = cp;
                runKey = key;
            }
            String nfkc = NFKC.normalize(c);
            mapping(mappings, "n", cp, c, nfkc);
            mapping(mappings, "l", cp, c, PyCase.lower(c));
            mapping(mappings, "k", cp, c, PyCase.lower(nfkc));
        }
        records.add(String.format("r %x %x %s", runStart, (number + 1) * BLOCK - 1, runKey));
        records.addAll(mappings);
        return records;
    }

    private static String key(int cp, String c) {
        StringBuilder flags = new StringBuilder();
        if (PyChars.isSpace(cp)) {
            flags.append("sS");
        }
        if (PyChars.isAlnum(cp)) {
            flags.append('a');
        }
        if (PyChars.isWord(cp)) {
            flags.append('w');
        }
        if (Normalize.isPunctuation(c)) {
            flags.append('p');
        }
        String sigma = "" + finals("a" + c + "\u03A3") + finals(c + "\u03A3") + finals("a\u03A3" + c)
            + finals("a\u03A3" + c + "a");
        return PyChars.category(cp) + ":" + flags + ":" + sigma;
    }

    private static int finals(String text) {
        String lower = PyCase.lower(text);
        int count = 0;
        for (int i = 0; i < lower.length(); i++) {
            if (lower.charAt(i) == '\u03C2') {
                count++;
            }
        }
        return count;
    }

    private static void mapping(List<String> out, String kind, int cp, String c, String mapped) {
        if (mapped.equals(c)) {
            return;
        }
        StringBuilder b = new StringBuilder().append(kind).append(' ').append(Integer.toHexString(cp)).append(' ');
        mapped.codePoints().forEach(m -> b.append(Integer.toHexString(m)).append('.'));
        b.setLength(b.length() - 1);
        out.add(b.toString());
    }
}
