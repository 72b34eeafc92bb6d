"""Look-alike letters the door classifier folds to the ASCII letter or digit they imitate.

Pairs of characters (look-alike, then its ASCII stand-in), taken from Unicode's
confusables data (UTS #39) for every entry whose prototype is one ASCII letter or digit,
kept only where NFKC and case-folding do not already give that character. Read by
``toolkit.core.doors`` on the first text or id that holds a letter outside its own small
table, so ASCII questions never load it.
"""

PAIRS = (
    "×xıiƅbƍgƨ2ƽ5ǀlȝ3ȣ8ɑaɜ3ɡgɣyɩiɪiɯwʀrʋuʏyʒ3ʝjαaβbγyεeζzηhιiκkμmνnοoρpσcτt"
    "υuχxϝfϩ2ϳjϻmаaб6вbгrеeз3кkмmнhоoрpсcтtуyхxьbѕsіiјjѡwѵvүyһhҽeӏiӡ3ԁdԍgԛq"
    "ԝwաwգqզqհhոnռnսuտsցgքfօo۱l۵o۷v०o০o৪8৭9੦o੧9੪8૦oଃ8ଠo୦o୨9௦oంo౦oಂo೦oംoഠo൦o"
    "൭9ංo๐o໐oဝo၀oყyჿoሀuዐoᎠdᎡrᎢtᎥiᎩyᎪaᎫjᎬeᎱrᎳwᎷmᎻhᎽyᏀgᏂhᏃzᏎ4ᏏbᏒrᏔwᏕsᏙvᏚsᏞlᏟc"
    "ᏢpᏦkᏧdᏮ6ᏳgᏴbᐯvᑌuᑭpᑯdᑲbᒍjᒪlᒿ2ᕁxᕼhᕽxᖇrᖯbᖴfᗅaᗞdᗪdᗰmᗷb᙭x᙮xᚷxᛁlᛕkᛖmᴄcᴏoᴑoᴜu"
    "ᴠvᴡwᴢzᴦrᶃgᶌyẝfỿy℮e∣l∨v∪u⊤t⋁v⋃u⋿e⍳i⍴p⍺a⏽l│l╳x⟙t⤫x⤬x⨯xⲅrⲏhⲓlⲕkⲙmⲛnⲟoⲣpⲥc"
    "ⲧtⲩyⲭxⳋ9ⳍ3ⳑlⳓ6ⴸvⴹeⵏlⵔoⵕqⵝx〇oꓐbꓑpꓒdꓓdꓔtꓖgꓗkꓙjꓚcꓜzꓝfꓟmꓠnꓡlꓢsꓣrꓦvꓧhꓪwꓫxꓬy"
    "ꓮaꓰeꓲlꓳoꓴuꙅ2ꙇiꛟvꛯ2ꜱsꝛ2ꝫ3ꝯ9ꞙfꞟuꞵbꬲeꬵfꬽoꭇrꭈrꭎuꭒuꭓxꭚy𐊂b𐊆e𐊇f𐊊l𐊐x𐊒o𐊕p𐊖s𐊗t𐊠a"
    "𐊡b𐊢c𐊥f𐊫o𐊰m𐊱t𐊲y𐊴x𐋏h𐋵z𐌁b𐌂c𐌉l𐌑m𐌕t𐌗x𐌚8𐌠l𐌢x𐐬o𐐽c𐑃l𐑈s𐓜r𐓪o𐓶u𐓺7𐔓n𐔖o𐔘k𐔜c𐔝v𐔥f𐔦l𐔧x"
    "𑓐o𑜆v𑜊w𑜎w𑜏w𑣀v𑣁s𑣂f𑣃i𑣄y𑣆7𑣈o𑣉z𑣊3𑣌9𑣎e𑣏4𑣒l𑣕6𑣖9𑣗o𑣘u𑣛5𑣜t𑣠o𑣥z𑣦w𑣩c𑣬x𑣯w𑣲c𖼈v𖼊t𖼖l𖼨l"
    "𖼵r𖼺s𖼻3𖽀a𖽂u𖽃y𝈆3𝈍v𝈒7𝈓f𝈖r𝈪l🝌c🝨t"
)
