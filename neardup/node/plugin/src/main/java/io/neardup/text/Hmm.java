package io.neardup.text;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * jieba's HMM for words the dictionary does not know ({@code jieba.finalseg.cut}, as ported to
 * {@code ingest/hmm.py} {@code hmm_cut}), word for word.
 *
 * <p>Viterbi over the four states Begin, Middle, End, Single with jieba's own tables (exported from
 * {@code jieba.finalseg}, never recomputed), the same float additions in the same order and the same
 * tie-breaks as Python, since states do tie (characters missing from some emission tables). Text outside
 * {@code [\u4E00-\u9FD5]} is split by finalseg's {@code re_skip}, {@code ([a-zA-Z0-9]+(?:\.\d+)?%?)}, where
 * Python's {@code \d} is any Unicode decimal digit (category Nd), not only ASCII: from
 * {@link PreciseCut} only ASCII digits reach it, but {@link #cut} accepts any text.
 */
public final class Hmm {
    private static final class Holder {
        static final Hmm SHARED = load();
    }

    private static final char HAN_FIRST = '\u4E00';
    private static final char HAN_LAST = '\u9FD5';
    /** Labels, also the row of each state in a back-pointer step (Python's "BMSE" order). */
    private static final byte B = 0;
    private static final byte M = 1;
    private static final byte S = 2;
    private static final byte E = 3;

    private final double startB;
    private final double startM;
    private final double startE;
    private final double startS;
    private final double transEB;
    private final double transSB;
    private final double transMM;
    private final double transBM;
    private final double transSS;
    private final double transES;
    private final double transBE;
    private final double transME;
    /** Emission log-probability of each han character per state, finalseg.MIN_FLOAT where jieba has none. */
    private final double[] emitB;
    private final double[] emitM;
    private final double[] emitE;
    private final double[] emitS;
    private final Set<String> forceSplit;

    private Hmm(Map<String, Double> start, Map<String, Double> trans,
                Map<String, double[]> emit, Set<String> forceSplit) {
        this.startB = require(start, "B", "start");
        this.startM = require(start, "M", "start");
        this.startE = require(start, "E", "start");
        this.startS = require(start, "S", "start");
        this.transEB = require(trans, "EB", "transition");
        this.transSB = require(trans, "SB", "transition");
        this.transMM = require(trans, "MM", "transition");
        this.transBM = require(trans, "BM", "transition");
        this.transSS = require(trans, "SS", "transition");
        this.transES = require(trans, "ES", "transition");
        this.transBE = require(trans, "BE", "transition");
        this.transME = require(trans, "ME", "transition");
        this.emitB = emit.get("B");
        this.emitM = emit.get("M");
        this.emitE = emit.get("E");
        this.emitS = emit.get("S");
        this.forceSplit = Set.copyOf(forceSplit);
    }

    /** The model exported with the plugin, loaded on first use. */
    public static Hmm shared() {
        return Holder.SHARED;
    }

    /** The words of {@code text}, as {@code list(jieba.finalseg.cut(text))}. */
    public List<String> cut(String text) {
        List<String> out = new ArrayList<>();
        cut(text, 0, text.length(), out);
        return out;
    }

    /** Appends the words of {@code text[from, to)} to {@code out}. */
    void cut(String text, int from, int to, List<String> out) {
        int at = from;
        while (at < to) {
            int end = at;
            if (isHan(text.charAt(at))) {
                while (end < to && isHan(text.charAt(end))) {
                    end++;
                }
                hanBlock(text, at, end, out);
            } else {
                while (end < to && !isHan(text.charAt(end))) {
                    end++;
                }
                skipBlock(text, at, end, out);
            }
            at = end;
        }
    }

    private static boolean isHan(char c) {
        return c >= HAN_FIRST && c <= HAN_LAST;
    }

    private static boolean isAsciiAlnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    /** {@code re_skip.split}: matches of {@code [a-zA-Z0-9]+(?:\.\d+)?%?} and the text between, empty parts dropped. */
    private static void skipBlock(String text, int from, int to, List<String> out) {
        int piece = from;
        int at = from;
        while (at < to) {
            if (!isAsciiAlnum(text.charAt(at))) {
                at++; // a surrogate is no match start either, so stepping by char is safe
                continue;
            }
            int end = at + 1;
            while (end < to && isAsciiAlnum(text.charAt(end))) {
                end++;
            }
            if (end < to && text.charAt(end) == '.') {
                int digits = end + 1;
                while (digits < to) {
                    int cp = text.codePointAt(digits);
                    if (digits + Character.charCount(cp) > to || !"Nd".equals(PyChars.category(cp))) {
                        break;
                    }
                    digits += Character.charCount(cp);
                }
                if (digits > end + 1) {
                    end = digits;
                }
            }
            if (end < to && text.charAt(end) == '%') {
                end++;
            }
            if (at > piece) {
                out.add(text.substring(piece, at));
            }
            out.add(text.substring(at, end));
            piece = end;
            at = end;
        }
        if (to > piece) {
            out.add(text.substring(piece, to));
        }
    }

    /** Labels {@code text[from, to)} (all han) and cuts it at the labels, as finalseg's {@code __cut}. */
    private void hanBlock(String text, int from, int to, List<String> out) {
        byte[] labels = states(text, from, to);
        int begin = 0;
        int next = 0;
        int n = to - from;
        for (int i = 0; i < n; i++) {
            byte label = labels[i];
            if (label == B) {
                begin = i;
            } else if (label == E) {
                emit(text.substring(from + begin, from + i + 1), out);
                next = i + 1;
            } else if (label == S) {
                emit(text.substring(from + i, from + i + 1), out);
                next = i + 1;
            }
        }
        if (next < n) {
            emit(text.substring(from + next, to), out);
        }
    }

    private void emit(String word, List<String> out) {
        if (forceSplit.isEmpty() || !forceSplit.contains(word)) {
            out.add(word);
            return;
        }
        word.codePoints().forEach(cp -> out.add(new String(Character.toChars(cp))));
    }

    /**
     * The most probable label of each character (finalseg's {@code viterbi}). Ties: B and E prefer their
     * second predecessor (S, M), M and S their first (M, S), and the last state S over E, exactly as the
     * comparisons of {@code ingest/hmm.py} {@code _states}, which match jieba's {@code max} over tuples.
     */
    private byte[] states(String text, int from, int to) {
        int n = to - from;
        int first = text.charAt(from) - HAN_FIRST;
        double vB = startB + emitB[first];
        double vM = startM + emitM[first];
        double vE = startE + emitE[first];
        double vS = startS + emitS[first];
        byte[] back = new byte[4 * n]; // back[4t + state]: the state at t - 1 that state at t came from
        for (int t = 1; t < n; t++) {
            int ch = text.charAt(from + t) - HAN_FIRST;
            double em = emitB[ch];
            double x = vE + transEB + em;
            double y = vS + transSB + em;
            double nB;
            if (y >= x) {
                nB = y;
                back[4 * t + B] = S;
            } else {
                nB = x;
                back[4 * t + B] = E;
            }
            em = emitM[ch];
            x = vM + transMM + em;
            y = vB + transBM + em;
            double nM;
            if (x >= y) {
                nM = x;
                back[4 * t + M] = M;
            } else {
                nM = y;
                back[4 * t + M] = B;
            }
            em = emitS[ch];
            x = vS + transSS + em;
            y = vE + transES + em;
            double nS;
            if (x >= y) {
                nS = x;
                back[4 * t + S] = S;
            } else {
                nS = y;
                back[4 * t + S] = E;
            }
            em = emitE[ch];
            x = vB + transBE + em;
            y = vM + transME + em;
            double nE;
            if (y >= x) {
                nE = y;
                back[4 * t + E] = M;
            } else {
                nE = x;
                back[4 * t + E] = B;
            }
            vB = nB;
            vM = nM;
            vS = nS;
            vE = nE;
        }
        byte[] labels = new byte[n];
        byte state = vS >= vE ? S : E;
        labels[n - 1] = state;
        for (int t = n - 1; t > 0; t--) {
            state = back[4 * t + state];
            labels[t - 1] = state;
        }
        return labels;
    }

    private static double require(Map<String, Double> table, String key, String what) {
        Double value = table.get(key);
        if (value == null) {
            throw new IllegalStateException("jieba HMM has no " + what + " probability for " + key);
        }
        return value;
    }

    private static Hmm load() {
        double[] minFloat = {Double.NaN};
        JiebaData.rows("constants.tsv", 2, row -> {
            if (row[0].equals("min_float")) {
                minFloat[0] = Double.parseDouble(row[1]);
            }
        });
        if (Double.isNaN(minFloat[0])) {
            throw new IllegalStateException("jieba constants.tsv has no min_float");
        }
        Map<String, Double> start = new HashMap<>();
        JiebaData.rows("hmm_start.tsv", 2, row -> start.put(row[0], Double.parseDouble(row[1])));
        Map<String, Double> trans = new HashMap<>();
        JiebaData.rows("hmm_trans.tsv", 3, row -> trans.put(row[0] + row[1], Double.parseDouble(row[2])));
        Map<String, double[]> emit = new HashMap<>();
        for (String state : List.of("B", "M", "E", "S")) {
            double[] table = new double[HAN_LAST - HAN_FIRST + 1];
            Arrays.fill(table, minFloat[0]);
            emit.put(state, table);
        }
        JiebaData.rows("hmm_emit.tsv", 3, row -> {
            double[] table = emit.get(row[0]);
            if (table == null) {
                throw new IllegalArgumentException("unknown HMM state " + row[0]);
            }
            // only han characters ever reach the Viterbi; jieba's tables hold a few others it never looks up
            if (row[1].length() == 1 && isHan(row[1].charAt(0))) {
                table[row[1].charAt(0) - HAN_FIRST] = Double.parseDouble(row[2]);
            }
        });
        Set<String> forceSplit = new HashSet<>();
        JiebaData.rows("force_split.txt", 1, row -> forceSplit.add(row[0]));
        return new Hmm(start, trans, emit, forceSplit);
    }
}
